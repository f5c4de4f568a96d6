/**
 * `tenxgraph worker`: a worker process from a project's config takes background runs queued
 * through `tenxgraph api`, drains and exits 0 on SIGTERM, and refuses to start without a queue.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { caller, userMessage } from "../support/http.js";

const root = new URL("../../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace packages.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const scratch = mkdtempSync(join(root, ".tenxgraph", "worker-cli-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A project whose graph answers "done", on SQLite, with `runs` in its config when given. */
function writeProject(dir: string, runs: Record<string, unknown> | null): string {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "tenxgraph.json");
  writeFileSync(
    config,
    JSON.stringify({
      agent: "./graph.mjs:graph",
      checkpointer: "./store.mjs:checkpointer",
      ...(runs ? { runs } : {}),
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

describe("tenxgraph worker", () => {
  it("takes a run queued through tenxgraph api, and drains and exits 0 on SIGTERM", async () => {
    const dsn = await freshDatabase("worker_cli");
    const dir = join(scratch, "with-runs");
    const config = writeProject(dir, {
      postgres_dsn: dsn,
      heartbeat_ms: 200,
      stale_after_ms: 1000,
      poll_interval_ms: 100,
    });
    const worker = new CliProcess(["worker", "--config", config], { cwd: dir });
    // A pure API node: its in-process worker (one by default) would race the CLI worker.
    const api = new CliProcess(["api", "--config", config, "--port", "0", "--workers", "0"], {
      cwd: dir,
    });
    try {
      const workerId = (await worker.waitFor(/worker (\S+) taking runs/))[1];
      const call = caller(await api.url());
      const posted = await call("POST", "/v1/threads/cli-1/runs", {
        messages: [userMessage("hello")],
      });
      expect(posted.status, posted.text).toBe(202);
      const runId = posted.body.data.run_id as string;
      const joined = await call("GET", `/v1/threads/cli-1/runs/${runId}/join`);
      expect(joined.body.data, worker.output).toMatchObject({
        status: "completed",
        attempts: 1,
        worker_id: workerId,
      });
      const messages = (await call("GET", "/v1/threads/cli-1/messages")).body.data.messages;
      expect(messages.at(-1).content[0].text).toBe("done");

      expect(await worker.stop("SIGTERM"), worker.output).toBe(0);
      expect(worker.output).toContain("SIGTERM: draining");
    } finally {
      await Promise.all([worker.stop("SIGKILL"), api.stop()]);
    }
  }, 90_000);

  it("runs examples/workers: two workers, the one holding a run SIGKILLed mid-receipt, the other finishes it", async () => {
    const dsn = await freshDatabase("workers_example");
    const config = join(root, "examples", "workers", "tenxgraph.json");
    const env = { TENXGRAPH_RUNS_DSN: dsn };
    const workers = [0, 1].map(
      () => new CliProcess(["worker", "--config", config], { cwd: root, env }),
    );
    const api = new CliProcess(["api", "--config", config, "--port", "0", "--workers", "0"], {
      cwd: root,
      env,
    });
    try {
      const ids = await Promise.all(
        workers.map(async (w) => (await w.waitFor(/worker (\S+) taking runs/))[1]!),
      );
      const call = caller(await api.url());
      const posted = await call("POST", "/v1/threads/order-4821/runs", {
        messages: [userMessage("charge order 4821")],
      });
      expect(posted.status, posted.text).toBe(202);
      const runId = posted.body.data.run_id as string;
      // The receipt takes 2 s: once the charge is printed, kill whoever holds the run.
      let holder = -1;
      while (holder < 0) {
        holder = workers.findIndex((w) => w.output.includes("charged order 4821"));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Past the charge's own record (it returns at once; the receipt has ~2 s to go).
      await new Promise((resolve) => setTimeout(resolve, 500));
      await workers[holder]!.stop("SIGKILL");
      const joined = await call("GET", `/v1/threads/order-4821/runs/${runId}/join`);
      const other = workers[1 - holder]!;
      expect(joined.body.data, other.output).toMatchObject({
        status: "completed",
        worker_id: ids[1 - holder],
      });
      expect(joined.body.data.attempts).toBeGreaterThanOrEqual(2);
      // Charged once in all (the survivor replays the recorded charge); the receipt was sent.
      const everything = workers.map((w) => w.output).join("");
      expect(everything.match(/charged order 4821/g)).toHaveLength(1);
      expect(other.output).toContain("receipt");
    } finally {
      await Promise.all([...workers.map((w) => w.stop("SIGKILL")), api.stop()]);
    }
  }, 90_000);

  it("four workers started at once on a fresh database all set it up and take runs", async () => {
    // The threads on PostgreSQL too, in the same database: every setup path (the store's
    // schema, the runs' tables, the queue's own schema) races every other at once.
    const dsn = await freshDatabase("workers_at_once");
    const dir = join(scratch, "at-once");
    const config = writeProject(dir, {
      postgres_dsn: dsn,
      heartbeat_ms: 200,
      stale_after_ms: 1000,
      poll_interval_ms: 100,
    });
    writeFileSync(
      join(dir, "store.mjs"),
      `import { PgCheckpointer } from "@tenxgraph/postgres";
       export const checkpointer = new PgCheckpointer({
         postgresDsn: ${JSON.stringify(dsn)}, schema: "threads" });`,
    );
    const workers = [0, 1, 2, 3].map(
      () => new CliProcess(["worker", "--config", config], { cwd: dir }),
    );
    const api = new CliProcess(["api", "--config", config, "--port", "0", "--workers", "0"], {
      cwd: dir,
    });
    try {
      const ids = await Promise.all(
        workers.map(async (w) => (await w.waitFor(/worker (\S+) taking runs/))[1]!),
      );
      expect(new Set(ids).size).toBe(4);
      const call = caller(await api.url());
      const runIds: string[] = [];
      for (const n of [1, 2, 3, 4]) {
        const posted = await call("POST", `/v1/threads/at-once-${n}/runs`, {
          messages: [userMessage(`hello ${n}`)],
        });
        expect(posted.status, posted.text).toBe(202);
        runIds.push(posted.body.data.run_id as string);
      }
      for (const [i, runId] of runIds.entries()) {
        const joined = await call("GET", `/v1/threads/at-once-${i + 1}/runs/${runId}/join`);
        expect(joined.body.data.status).toBe("completed");
      }
      for (const w of workers) expect(await w.stop("SIGTERM"), w.output).toBe(0);
    } finally {
      await Promise.all([...workers.map((w) => w.stop("SIGKILL")), api.stop()]);
    }
  }, 120_000);

  it("without runs configured, exits non-zero naming runs.postgres_dsn", async () => {
    const dir = join(scratch, "without-runs");
    const config = writeProject(dir, null);
    const worker = new CliProcess(["worker", "--config", config], {
      cwd: dir,
      env: { TENXGRAPH_RUNS_DSN: "" },
    });
    const code = await worker.exited;
    expect(code, worker.output).not.toBe(0);
    expect(code, worker.output).not.toBeNull();
    expect(worker.output).toContain("runs.postgres_dsn");
  }, 60_000);
});
