/**
 * A tenxgraph API server with the inspector, in its own process so a test can SIGKILL it:
 * serves the inspector graph (or the team graph) on 127.0.0.1 (a free port, JWT auth) over a SQLite file and
 * reports `{ type: "listening", port }`.
 */
import { silentLogger } from "@tenxgraph/core";
import { serve } from "@tenxgraph/server";
import { appendEffect } from "../../support/effect-log.js";
import { openStore, type StoreSpec } from "../../support/store-spec.js";
import { buildTeamGraph } from "../../support/team-graph.js";
import { report, workerParams } from "../../support/worker-process.js";
import { TEST_JWT_SECRET } from "../../server/support/http.js";
import { buildInspectorGraph, type InspectorGraphParams } from "./inspector-graph.js";

/** Params of an inspector server process. */
export interface InspectorServerParams extends InspectorGraphParams {
  store: StoreSpec;
  /** Serve the team graph (a supervisor with a WORKER subgraph) instead of the inspector graph. */
  team?: boolean;
}

const params = workerParams<InspectorServerParams>();
const checkpointer = openStore(params.store);
const charged = (orderId: string) =>
  appendEffect(params.effectLog, { line: `charged order ${orderId}`, pid: process.pid });
const graph = params.team
  ? buildTeamGraph(checkpointer, charged)
  : buildInspectorGraph(params, checkpointer);
const server = await serve({
  graph,
  host: "127.0.0.1",
  port: 0,
  auth: { method: "jwt", secret: TEST_JWT_SECRET },
  logger: silentLogger,
});
await report({ type: "listening", port: server.port });
process.once("SIGTERM", () => {
  void server
    .close()
    .then(() => checkpointer.close())
    .then(() => process.exit(0));
});
