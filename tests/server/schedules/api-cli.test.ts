/**
 * Schedules and webhooks through `tenxgraph api` from a project's config: the API process runs
 * the schedules and sends the webhook outbox, and a delivery owed when the process is SIGKILLed
 * is sent by the next one, with the same event id.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { verifyWebhook } from "@tenxgraph/server";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { caller, userMessage } from "../support/http.js";

const root = new URL("../../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace packages.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const scratch = mkdtempSync(join(root, ".tenxgraph", "schedules-cli-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SECRET = "cli-webhook-secret-0123456789";

/** A project whose graph answers "done", on SQLite, with runs and webhooks in its config. */
function writeProject(dir: string, dsn: string): string {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "tenxgraph.json");
  writeFileSync(
    config,
    JSON.stringify({
      agent: "./graph.mjs:graph",
      checkpointer: "./store.mjs:checkpointer",
      runs: { postgres_dsn: dsn, heartbeat_ms: 200, stale_after_ms: 1000, poll_interval_ms: 100 },
      webhooks: { secret: SECRET, retry_base_ms: 100, retry_max_ms: 200, timeout_ms: 1000 },
    }),
  );
  writeFileSync(
    join(dir, "store.mjs"),
    `import { SqliteCheckpointer } from "@tenxgraph/sqlite";
     export const checkpointer = new SqliteCheckpointer({ path: ${JSON.stringify(join(dir, "threads.db"))} });`,
  );
  writeFileSync(
    join(dir, "graph.mjs"),
    `import { END, Message, StateGraph } from "@tenxgraph/core";
     export const graph = new StateGraph()
       .addNode("MAIN", async () => Message.assistant("done"))
       .addEdge("MAIN", END)
       .setEntryPoint("MAIN");`,
  );
  return config;
}

async function until(check: () => Promise<boolean> | boolean, what: string, output: string) {
  const giveUp = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`timed out waiting for ${what}:\n${output}`);
    await sleep(50);
  }
}

describe("tenxgraph api: schedules and webhooks", () => {
  it("delivers a webhook owed when the API was SIGKILLed, after its restart; runs a schedule", async () => {
    const dsn = await freshDatabase("schedules_cli");
    const dir = join(scratch, "project");
    const config = writeProject(dir, dsn);
    // The receiver's port, closed for now: every attempt fails until it listens.
    const received: { id: string; body: string; signature: string }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        received.push({
          id: String(req.headers["tenxgraph-event-id"]),
          body,
          signature: String(req.headers["tenxgraph-signature"]),
        });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const port = (receiver.address() as AddressInfo).port;
    await new Promise((resolve) => receiver.close(resolve));
    const webhook = `http://127.0.0.1:${port}/hook`;

    const first = new CliProcess(["api", "--config", config, "--port", "0"], { cwd: dir });
    let second: CliProcess | null = null;
    try {
      let call = caller(await first.url());
      const posted = await call("POST", "/v1/threads/cli-hook/runs", {
        messages: [userMessage("hello")],
        webhook,
      });
      expect(posted.status, posted.text).toBe(202);
      const runId = posted.body.data.run_id as string;
      const hooks = `/v1/threads/cli-hook/runs/${runId}/webhooks`;
      await until(
        async () => (await call("GET", hooks)).body.data.deliveries[0]?.attempts >= 2,
        "two failed attempts",
        first.output,
      );
      expect((await call("GET", hooks)).body.data.deliveries[0].state).toBe("pending");
      await first.stop("SIGKILL");

      await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
      second = new CliProcess(["api", "--config", config, "--port", "0"], { cwd: dir });
      call = caller(await second.url());
      await until(() => received.length > 0, "the delivery", second.output);
      const [delivery] = received;
      expect(verifyWebhook(SECRET, delivery!.body, delivery!.signature)).toBe(true);
      expect(JSON.parse(delivery!.body)).toMatchObject({
        id: delivery!.id,
        type: "run.completed",
        data: { run_id: runId, thread_id: "cli-hook" },
      });
      await until(
        async () => (await call("GET", hooks)).body.data.deliveries[0]?.state === "delivered",
        "the delivery recorded",
        second.output,
      );

      // The API process runs the schedules too.
      const cron = await call("POST", "/v1/crons", {
        schedule: "* * * * * *",
        messages: [userMessage("tick")],
      });
      expect(cron.status, cron.text).toBe(201);
      const cronId = cron.body.data.cron_id as string;
      await until(
        async () =>
          (await call("GET", `/v1/crons/${cronId}`)).body.data.ticks.some(
            (t: { queued: boolean }) => t.queued,
          ),
        "a tick queued",
        second.output,
      );
      expect((await call("DELETE", `/v1/crons/${cronId}`)).status).toBe(200);
    } finally {
      await Promise.all([first.stop("SIGKILL"), second?.stop("SIGKILL")]);
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 120_000);
});
