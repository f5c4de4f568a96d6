/**
 * A webhook deliverer in its own process, for tests that SIGKILL it in the middle of a delivery:
 * sends the outbox of the runs' database and reports `{ type: "ready" }`.
 */
import { jsonLogger } from "@tenxgraph/core";
import { PgRunStore, WebhookDeliverer, type WebhookSettings } from "@tenxgraph/server";
import { report, workerParams } from "../../support/worker-process.js";

const params = workerParams<{ runsDsn: string; settings: WebhookSettings }>();
const store = new PgRunStore({ postgresDsn: params.runsDsn });
const deliverer = new WebhookDeliverer({
  pool: store.pool,
  settings: params.settings,
  logger: jsonLogger("warn"),
});
deliverer.start();
await report({ type: "ready", pid: process.pid });
// The deliverer's timer does not hold the process open (a server or a worker does): until killed.
setInterval(() => {}, 60_000);
