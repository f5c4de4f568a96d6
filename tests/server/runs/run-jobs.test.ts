/**
 * What one background run writes on its way, on a real PostgreSQL: its job names its thread
 * (so the worker reads no run row before taking it), and a job queued by an older version,
 * naming only the run, still runs; its events are appended in batches, and a stream, from the
 * start or rejoined, still gets each once and in order, the run's status last.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { gatedGraph } from "../support/gated-graph.js";
import { caller, userMessage } from "../support/http.js";
import { startRunsApi, withTestWorker, type RunsApi } from "../support/runs-api.js";
import { until } from "../../support/until.js";
import { readRunStream } from "./run-stream-client.js";

describe("background run jobs", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-run-jobs-"));
  const spec = freshStore("postgres", "run_jobs", dir);
  const checkpointer = openStore(spec);
  const { graph, close: closeGate, open: openGate } = gatedGraph(checkpointer);
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

  const withWorker = <T>(work: () => Promise<T>, eventBatchMs?: number): Promise<T> =>
    withTestWorker(graph, api.store, work, { eventBatchMs });

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
    expect(state?.values.messages.map((m) => m.role)).toEqual(["user", "assistant", "assistant"]);
  });

  async function postRun(threadId: string): Promise<string> {
    const posted = await call("POST", `/v1/threads/${threadId}/runs`, {
      messages: [userMessage("hi")],
    });
    return posted.body.data.run_id as string;
  }

  /** The run's events as stored, one list per statement that wrote them (its `now()`). */
  async function writes(runId: string): Promise<string[][]> {
    const { rows } = await db.query<{ types: string[] }>(
      `SELECT array_agg(event->>'type' ORDER BY seq) AS types FROM tenxgraph_run_events
        WHERE run_id = $1 GROUP BY created_at ORDER BY min(seq)`,
      [runId],
    );
    return rows.map((r) => r.types);
  }

  it("a run that ends within the batch window writes its events with its end", async () => {
    const runId = await postRun("jobs-2");
    const joined = await withWorker(
      () => call("GET", `/v1/threads/jobs-2/runs/${runId}/join`),
      60_000,
    );
    expect(joined.body.data).toMatchObject({ status: "completed" });
    const [attempt, ...rest] = await writes(runId);
    // The hold and its event in one statement; everything else with the final status.
    expect(attempt).toEqual(["run_attempt"]);
    expect(rest).toHaveLength(1);
    expect(rest[0]!.slice(0, 1)).toEqual(["run_start"]);
    expect(rest[0]!.slice(-2)).toEqual(["run_end", "run_status"]);
  });

  it("streams from the start and rejoined mid-run get every batched event once, in order, the status last", async () => {
    closeGate();
    const runId = await postRun("jobs-3");
    const whole = readRunStream(api.server.url, "jobs-3", runId);
    const [fromStart, first, rest, stored] = await withWorker(async () => {
      // The run waits in WAIT once its first nodes' events are out, in a batch of their own.
      await until(async () => (await writes(runId)).length >= 2, "the first batch of events");
      const first = await readRunStream(api.server.url, "jobs-3", runId, { stopAfter: 3 });
      const rest = readRunStream(api.server.url, "jobs-3", runId, {
        lastEventId: first.at(-1)!.id,
      });
      openGate();
      await until(async () => {
        const { status } = (await call("GET", `/v1/threads/jobs-3/runs/${runId}`)).body.data;
        return status !== "pending" && status !== "running";
      }, "the run's end");
      // Its status is written: every event it had is written with or before it.
      const stored = (await writes(runId)).flat();
      return [await whole, first, await rest, stored] as const;
    }, 50);
    expect(stored.at(-1)).toBe("run_status");
    expect(stored.filter((t) => t === "run_end")).toHaveLength(1);
    expect(stored.filter((t) => t === "node_start")).toHaveLength(2);
    expect((await writes(runId)).length).toBeGreaterThanOrEqual(3);
    expect(fromStart.map((e) => e.id)).toEqual(stored.map((_, i) => i + 1));
    expect(fromStart.map((e) => e.event.type)).toEqual(stored);
    expect([...first, ...rest]).toEqual(fromStart);
    expect(fromStart.at(-1)!.event).toEqual({ type: "run_status", status: "completed" });
  });
});
