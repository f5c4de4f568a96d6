/**
 * What one background run writes on its way, on a real PostgreSQL: its job names its thread
 * (so the worker reads no run row before taking it), and a job queued by an older version,
 * naming only the run, still runs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { END, Message, StateGraph, silentLogger } from "@tenxgraph/core";
import { RunWorker } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { caller, userMessage } from "../support/http.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";

describe("background run jobs", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-run-jobs-"));
  const spec = freshStore("postgres", "run_jobs", dir);
  const checkpointer = openStore(spec);
  const graph = new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
  let api: RunsApi;
  let db: pg.Pool;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    // No worker at first: each case looks at the queue before one takes the run.
    api = await startRunsApi(graph, "run_jobs", { worker: false });
    db = new pg.Pool({ connectionString: api.dsn, max: 1 });
    call = caller(api.server.url);
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  async function payloadOf(runId: string): Promise<Record<string, unknown>> {
    const { rows } = await db.query<{ payload: Record<string, unknown> }>(
      "SELECT payload FROM graphile_worker._private_jobs WHERE key = $1",
      [`tenxgraph_run:${runId}`],
    );
    return rows[0]!.payload;
  }

  async function withWorker<T>(work: () => Promise<T>): Promise<T> {
    const worker = new RunWorker({
      graph,
      store: api.store,
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
      logger: silentLogger,
    });
    await worker.start();
    try {
      return await work();
    } finally {
      await worker.drain();
    }
  }

  it("queues a job naming the run and its thread; a job naming only the run still runs", async () => {
    const posted = await call("POST", "/v1/threads/jobs-1/runs", {
      messages: [userMessage("hi")],
    });
    const runId = posted.body.data.run_id as string;
    expect(await payloadOf(runId)).toEqual({ runId, threadId: "jobs-1" });

    // As an older version queued it.
    await db.query(
      `UPDATE graphile_worker._private_jobs SET payload = jsonb_build_object('runId', $1::text)
        WHERE key = 'tenxgraph_run:' || $1`,
      [runId],
    );
    expect(await payloadOf(runId)).toEqual({ runId });
    const joined = await withWorker(() => call("GET", `/v1/threads/jobs-1/runs/${runId}/join`));
    expect(joined.body.data).toMatchObject({ status: "completed", attempts: 1 });
    const state = await graph.getState({ threadId: "jobs-1" });
    expect(state?.values.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
