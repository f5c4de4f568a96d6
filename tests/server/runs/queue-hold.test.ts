/**
 * A thread's first run runs outside any graphile-worker queue, on a real PostgreSQL: a queue per
 * waiting thread made every job pick-up lock one row per thread with a run waiting. A run
 * posted while another is active waits in its thread's queue, which is held for the first run
 * (locked in its name) until that run ends, whatever ends it: its worker, a cancel, a delete.
 * The hold is made and released by triggers, so a run queued by an older version waits too, and
 * an end racing a run being queued behind it is seen by one side or the other.
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
import { startRunsApi, testWorker, withTestWorker, type RunsApi } from "../support/runs-api.js";
import { until } from "../../support/until.js";

describe("a thread's queue, held for its first run", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-queue-hold-"));
  const spec = freshStore("postgres", "queue_hold", dir);
  const checkpointer = openStore(spec);
  const { graph, close: closeGate, open: openGate } = gatedGraph(checkpointer);
  let api: RunsApi;
  let db: pg.Pool;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    // No worker of the API's own: each case looks at the jobs before one takes them.
    api = await startRunsApi(graph, "queue_hold", { worker: false });
    db = new pg.Pool({ connectionString: api.dsn, max: 4 });
    call = caller(api.server.url);
  }, 60_000);

  afterAll(async () => {
    openGate();
    await db?.end();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  async function postRun(threadId: string, strategy = "reject"): Promise<string> {
    const posted = await call("POST", `/v1/threads/${encodeURIComponent(threadId)}/runs`, {
      messages: [userMessage("hi")],
      multitask_strategy: strategy,
    });
    expect(posted.status, posted.text).toBe(202);
    return posted.body.data.run_id as string;
  }

  /** The queue the run's job is in, by name; null for a job in no queue. */
  async function queueOfJob(runId: string): Promise<string | null> {
    const { rows } = await db.query<{ queue_name: string | null }>(
      `SELECT q.queue_name FROM graphile_worker._private_jobs j
         LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
        WHERE j.key = 'tenxgraph_run:' || $1`,
      [runId],
    );
    expect(rows).toHaveLength(1);
    return rows[0]!.queue_name;
  }

  /** Who holds the thread's queue: its `locked_by`, null when unlocked, undefined when none. */
  async function queueHolder(threadId: string): Promise<string | null | undefined> {
    const { rows } = await db.query<{ locked_by: string | null }>(
      "SELECT locked_by FROM graphile_worker._private_job_queues WHERE queue_name = $1",
      [`tenxgraph:thread:${threadId}`],
    );
    return rows[0] ? rows[0].locked_by : undefined;
  }

  const statusOf = async (runId: string) => (await api.store.getRun(runId))!.status;

  /** Queues a run as a version before the hold did: no `queued` column, always the thread's queue. */
  async function queueAsOlderVersion(
    client: Pick<pg.Pool, "query">,
    threadId: string,
    runId: string,
  ) {
    await client.query(
      `WITH run AS (
         INSERT INTO tenxgraph_runs (run_id, thread_id, user_id, status, multitask_strategy, request)
         VALUES ($1, $2, NULL, 'pending', 'enqueue',
                 jsonb_build_object('input', jsonb_build_object('messages', '[]'::jsonb),
                                    'config', jsonb_build_object('threadId', $2::text)))
         RETURNING *)
       SELECT graphile_worker.add_job('tenxgraph_run',
         json_build_object('runId', run.run_id, 'threadId', run.thread_id),
         queue_name := 'tenxgraph:thread:' || run.thread_id, max_attempts := 1000,
         job_key := 'tenxgraph_run:' || run.run_id, run_at := run.created_at)
         FROM run`,
      [runId, threadId],
    );
  }

  /**
   * Does `first` in a transaction left open, starts `second` beside it, checks that `second`
   * has not finished 300 ms later (it waits for the transaction), then commits and awaits it.
   */
  async function expectToWaitFor(
    first: (client: pg.PoolClient) => Promise<unknown>,
    second: () => Promise<unknown>,
    what: string,
  ): Promise<void> {
    const client = await db.connect();
    try {
      await client.query("BEGIN");
      await first(client);
      let done = false;
      const waiting = second().finally(() => (done = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(done, what).toBe(false);
      await client.query("COMMIT");
      await waiting;
    } finally {
      client.release();
    }
  }

  it("runs the first run outside any queue, and the one posted behind it after it, in the thread's queue", async () => {
    closeGate();
    const first = await postRun("hold-order");
    const second = await postRun("hold-order", "enqueue");
    expect(await queueOfJob(first)).toBeNull();
    expect(await queueOfJob(second)).toBe("tenxgraph:thread:hold-order");
    expect(await queueHolder("hold-order")).toBe(`tenxgraph:run:${first}`);

    await withTestWorker(graph, api.store, async () => {
      await until(async () => (await statusOf(first)) === "running", "the first run running");
      // The second's job is ready and a worker is idle: only the hold keeps it back.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await statusOf(second)).toBe("pending");
      openGate();
      const joined = await call("GET", `/v1/threads/hold-order/runs/${second}/join`);
      expect(joined.body.data.status).toBe("completed");
    });
    const { rows } = await db.query<{ run_id: string; first: Date; last: Date }>(
      `SELECT run_id, min(created_at) AS first, max(created_at) AS last
         FROM tenxgraph_run_events WHERE run_id = ANY($1::text[]) GROUP BY run_id`,
      [[first, second]],
    );
    const times = new Map(rows.map((r) => [r.run_id, r]));
    expect(times.get(second)!.first.getTime()).toBeGreaterThanOrEqual(
      times.get(first)!.last.getTime(),
    );
    expect(await statusOf(first)).toBe("completed");
  });

  it("releases the queue when the first run ends without running: a cancel, a thread's delete", async () => {
    const first = await postRun("hold-cancel");
    const second = await postRun("hold-cancel", "enqueue");
    expect(await queueHolder("hold-cancel")).toBe(`tenxgraph:run:${first}`);
    expect((await call("POST", `/v1/threads/hold-cancel/runs/${first}/cancel`)).status).toBe(202);
    expect(await queueHolder("hold-cancel")).toBeNull();
    const joined = await withTestWorker(graph, api.store, () =>
      call("GET", `/v1/threads/hold-cancel/runs/${second}/join`),
    );
    expect(joined.body.data.status).toBe("completed");
    expect(await statusOf(first)).toBe("cancelled");

    const gone = await postRun("hold-delete");
    await postRun("hold-delete", "enqueue");
    expect(await queueHolder("hold-delete")).toBe(`tenxgraph:run:${gone}`);
    // What DELETE /v1/threads/:id does to the thread's runs.
    expect(await api.store.deleteThreadRuns("hold-delete")).toHaveLength(2);
    expect(await queueHolder("hold-delete")).not.toBe(`tenxgraph:run:${gone}`);
  });

  it("queues runs on a thread whose id is too long for a queue's name, or starts with '#', by its digest", async () => {
    const long = "long-" + "x".repeat(240);
    const digestOf = async (id: string) =>
      (await db.query<{ md5: string }>("SELECT md5($1)", [id])).rows[0]!.md5;
    for (const threadId of [long, "#" + (await digestOf(long))]) {
      const first = await postRun(threadId);
      const second = await postRun(threadId, "enqueue");
      const queue = `tenxgraph:thread:#${await digestOf(threadId)}`;
      expect(await queueOfJob(second)).toBe(queue);
      // The second id is the first's digest: its queue is still not the first's.
      expect(queue).not.toBe(`tenxgraph:thread:${threadId}`);
      const { rows } = await db.query<{ locked_by: string }>(
        "SELECT locked_by FROM graphile_worker._private_job_queues WHERE queue_name = $1",
        [queue],
      );
      expect(rows.map((r) => r.locked_by)).toEqual([`tenxgraph:run:${first}`]);
      const joined = await withTestWorker(graph, api.store, () =>
        call("GET", `/v1/threads/${encodeURIComponent(threadId)}/runs/${second}/join`),
      );
      expect(joined.body.data.status).toBe("completed");
      expect(await statusOf(first)).toBe("completed");
    }
  });

  it("holds the queue for a run an older version queues behind the first run", async () => {
    const first = await postRun("hold-older");
    await queueAsOlderVersion(db, "hold-older", "older-run-1");
    expect(await queueOfJob("older-run-1")).toBe("tenxgraph:thread:hold-older");
    expect(await queueHolder("hold-older")).toBe(`tenxgraph:run:${first}`);
    await db.query("UPDATE tenxgraph_runs SET status = 'cancelled' WHERE run_id = $1", [first]);
    expect(await queueHolder("hold-older")).toBeNull();
  });

  it("an end racing a run being queued behind the first run: whichever commits first, the queue is not left held", async () => {
    // The run is queued first: the first run's end waits for it, then releases the hold.
    const first = await postRun("hold-race-1");
    await expectToWaitFor(
      (queueing) => queueAsOlderVersion(queueing, "hold-race-1", "race-run-1"),
      () => db.query("UPDATE tenxgraph_runs SET status = 'completed' WHERE run_id = $1", [first]),
      "the end waits for the run being queued",
    );
    expect(await queueHolder("hold-race-1")).toBeNull();

    // The end is written first: the run queued behind waits for it, then sees no first run.
    const other = await postRun("hold-race-2");
    await expectToWaitFor(
      (ending) =>
        ending.query("UPDATE tenxgraph_runs SET status = 'completed' WHERE run_id = $1", [other]),
      () => queueAsOlderVersion(db, "hold-race-2", "race-run-2"),
      "the run being queued waits for the end",
    );
    expect(await queueHolder("hold-race-2")).toBeNull();
    const worker = testWorker(graph, api.store);
    await worker.start();
    try {
      for (const runId of ["race-run-1", "race-run-2"]) {
        await until(async () => (await statusOf(runId)) !== "pending", `${runId} taken`);
      }
    } finally {
      await worker.drain();
    }
  });

  it("a stale hold stays while its first run waits for a worker, unless that run's own job is in the queue", async () => {
    const first = await postRun("hold-stale");
    await postRun("hold-stale", "enqueue");
    await db.query(
      `UPDATE graphile_worker._private_job_queues SET locked_at = now() - interval '1 minute'
        WHERE queue_name = 'tenxgraph:thread:hold-stale'`,
    );
    // As after a takeover: the first run pending, its hold older than the stale window.
    expect(await api.store.unlockStrandedQueues(1000)).not.toContain("tenxgraph:thread:hold-stale");
    expect(await queueHolder("hold-stale")).toBe(`tenxgraph:run:${first}`);
    // An older version's worker queued the first run's job again, into its thread's queue: the
    // run would wait for itself.
    await db.query(
      `UPDATE graphile_worker._private_jobs
          SET job_queue_id = (SELECT id FROM graphile_worker._private_job_queues
                               WHERE queue_name = 'tenxgraph:thread:hold-stale')
        WHERE key = 'tenxgraph_run:' || $1`,
      [first],
    );
    expect(await api.store.unlockStrandedQueues(1000)).toEqual(["tenxgraph:thread:hold-stale"]);
  });
});
