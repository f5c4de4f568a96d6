/**
 * The threads' idle graphile-worker queues are deleted, on a real PostgreSQL: each job
 * pick-up locks every idle queue, so a queue left for every thread that ever had a run makes
 * every pick-up slower. (A thread gets a queue only when a run waits behind another: the first
 * runs outside it, see queue-hold.test.ts.) A queue with a job stays; a collection never runs
 * while a job is being queued, and a job queued during one waits for it, so no job is left
 * outside its thread's queue. A worker deletes the queue of each job it completes soon after,
 * not only every 5 heartbeats. A queue left locked with no job locked in it is unlocked once no
 * live run is on its thread.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { END, Message, StateGraph, silentLogger } from "@tenxgraph/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { caller, userMessage } from "../support/http.js";
import { startRunsApi, testWorker, withTestWorker, type RunsApi } from "../support/runs-api.js";
import { until } from "../../support/until.js";

/** The collection's advisory lock, as the server takes it. */
const COLLECTION_LOCK = "hashtextextended('tenxgraph_runs:queue_collection', 0)";

describe("idle queue collection", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-queue-collection-"));
  const spec = freshStore("postgres", "queue_collection", dir);
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
    // No worker of the API's own: each case starts one when it wants runs taken.
    api = await startRunsApi(graph, "queue_collection", { worker: false });
    db = new pg.Pool({ connectionString: api.dsn, max: 2 });
    call = caller(api.server.url);
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  async function postRun(threadId: string, strategy = "reject"): Promise<string> {
    const posted = await call("POST", `/v1/threads/${threadId}/runs`, {
      messages: [userMessage("hi")],
      multitask_strategy: strategy,
    });
    expect(posted.status).toBe(202);
    return posted.body.data.run_id as string;
  }

  /**
   * A run in its thread's queue: posted behind a first run (which runs outside it), both
   * pending; returns both. The queue is held for the first until it ends.
   */
  async function postQueuedRun(threadId: string): Promise<{ first: string; queued: string }> {
    const first = await postRun(threadId);
    return { first, queued: await postRun(threadId, "enqueue") };
  }

  /** The queue rows named for these threads (or other names, given whole), by name. */
  async function queues(...names: string[]): Promise<string[]> {
    const { rows } = await db.query<{ queue_name: string }>(
      `SELECT queue_name FROM graphile_worker._private_job_queues
        WHERE queue_name = ANY($1::text[]) ORDER BY queue_name`,
      [names.map((n) => (n.includes(":") ? n : `tenxgraph:thread:${n}`))],
    );
    return rows.map((r) => r.queue_name);
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

  const withWorker = <T>(work: () => Promise<T>): Promise<T> =>
    withTestWorker(graph, api.store, work);

  async function joinRun(threadId: string, runId: string): Promise<string> {
    const joined = await call("GET", `/v1/threads/${threadId}/runs/${runId}/join`);
    return joined.body.data.status as string;
  }

  it("keeps a queue with a job; a worker deletes the queues of threads whose runs ended", async () => {
    const one = await postQueuedRun("qc-1");
    const two = await postQueuedRun("qc-2");
    expect(await api.store.collectIdleQueues()).toBe(0);
    expect(await queues("qc-1", "qc-2")).toHaveLength(2);

    await withWorker(async () => {
      expect(await joinRun("qc-1", one.queued)).toBe("completed");
      expect(await joinRun("qc-2", two.queued)).toBe("completed");
      // Every 5 heartbeats: 1 s here.
      await until(async () => (await queues("qc-1", "qc-2")).length === 0, "the queues deleted");
    });

    // A thread whose queue was deleted gets a new one with its next waiting run, which runs in it.
    const again = await postQueuedRun("qc-1");
    expect(await queueOfJob(again.first)).toBeNull();
    expect(await queueOfJob(again.queued)).toBe("tenxgraph:thread:qc-1");
    expect(await withWorker(() => joinRun("qc-1", again.queued))).toBe("completed");
  });

  it("deletes a thread's queue soon after its run's job completes, long before the periodic collection", async () => {
    const { queued: runId } = await postQueuedRun("qc-soon");
    // Heartbeats 60 s apart: the periodic collection (every 5 beats) cannot be what deletes it.
    const worker = testWorker(graph, api.store, { heartbeatMs: 60_000, staleAfterMs: 120_000 });
    await worker.start();
    try {
      expect(await joinRun("qc-soon", runId)).toBe("completed");
      await until(async () => (await queues("qc-soon")).length === 0, "the queue deleted", {
        timeoutMs: 5_000,
      });
    } finally {
      await worker.drain();
    }
  });

  it("deletes only the given queues, and only those that are idle", async () => {
    await api.store.collectIdleQueues(); // what earlier cases left
    const { queued: waiting } = await postQueuedRun("qc-given-waiting");
    await db.query(
      `INSERT INTO graphile_worker._private_job_queues (queue_name)
       VALUES ('tenxgraph:thread:qc-given'), ('tenxgraph:thread:qc-other'),
              ('another-app:given')`,
    );
    const { rows } = await db.query<{ id: number }>(
      `SELECT id FROM graphile_worker._private_job_queues
        WHERE queue_name IN ('tenxgraph:thread:qc-given', 'tenxgraph:thread:qc-given-waiting',
                             'another-app:given')`,
    );
    expect(await api.store.collectIdleQueues(rows.map((r) => r.id))).toBe(1);
    expect(await queues("qc-given", "qc-other", "qc-given-waiting", "another-app:given")).toEqual([
      "another-app:given",
      "tenxgraph:thread:qc-given-waiting",
      "tenxgraph:thread:qc-other",
    ]);
    expect(await withWorker(() => joinRun("qc-given-waiting", waiting))).toBe("completed");
  });

  it("is skipped while a job is being queued, and deletes only the threads' queues", async () => {
    await api.store.collectIdleQueues(); // what earlier cases left
    await db.query(
      `INSERT INTO graphile_worker._private_job_queues (queue_name)
       VALUES ('tenxgraph:thread:qc-idle'), ('another-app:queue')`,
    );
    const queueing = await db.connect();
    try {
      await queueing.query("BEGIN");
      await queueing.query(`SELECT pg_advisory_xact_lock_shared(${COLLECTION_LOCK})`);
      expect(await api.store.collectIdleQueues()).toBeNull();
      expect(await queues("qc-idle")).toEqual(["tenxgraph:thread:qc-idle"]);
    } finally {
      await queueing.query("ROLLBACK");
      queueing.release();
    }
    expect(await api.store.collectIdleQueues()).toBe(1);
    expect(await queues("qc-idle", "another-app:queue")).toEqual(["another-app:queue"]);
  });

  it("makes a job queued during a collection wait for it, and puts the job in its thread's queue", async () => {
    const first = await postRun("qc-3");
    const collecting = await db.connect();
    let posted!: Promise<string>;
    try {
      await collecting.query("BEGIN");
      await collecting.query(`SELECT pg_advisory_xact_lock(${COLLECTION_LOCK})`);
      let settled = false;
      posted = postRun("qc-3", "enqueue").finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(settled).toBe(false);
    } finally {
      await collecting.query("ROLLBACK");
      collecting.release();
    }
    const runId = await posted;
    expect(await queueOfJob(first)).toBeNull();
    expect(await queueOfJob(runId)).toBe("tenxgraph:thread:qc-3");
    expect(await withWorker(() => joinRun("qc-3", runId))).toBe("completed");
  });

  it("unlocks a thread's queue left locked with no job locked in it, unless a live run is on the thread", async () => {
    // A slow worker's task end can delete a job another worker holds, whose own completion then
    // leaves the queue locked (graphile-worker frees it after 4 hours): made here directly.
    const stranded = await postQueuedRun("qc-stranded");
    const live = await postQueuedRun("qc-live");
    const held = await postQueuedRun("qc-held");
    // Their first runs ended (cancelled), which releases each queue held for its first run.
    for (const [thread, { first }] of Object.entries({
      "qc-stranded": stranded,
      "qc-live": live,
      "qc-held": held,
    })) {
      expect((await call("POST", `/v1/threads/${thread}/runs/${first}/cancel`)).status).toBe(202);
    }
    const lockQueue = (thread: string) =>
      db.query(
        `UPDATE graphile_worker._private_job_queues
            SET locked_by = 'gone-worker', locked_at = now() - interval '1 minute'
          WHERE queue_name = $1`,
        [`tenxgraph:thread:${thread}`],
      );
    await lockQueue("qc-stranded");
    // The same, with a live run on the thread: its queue stays locked until the run ends.
    await lockQueue("qc-live");
    await db.query(
      `UPDATE tenxgraph_runs SET status = 'running', heartbeat_at = now() WHERE run_id = $1`,
      [live.queued],
    );
    // A queue locked with its job (an orphaned job: the sweep's to free) is not this.
    await lockQueue("qc-held");
    await db.query(
      `UPDATE graphile_worker._private_jobs
          SET locked_by = 'gone-worker', locked_at = now() - interval '1 minute'
        WHERE key = 'tenxgraph_run:' || $1`,
      [held.queued],
    );
    expect(await api.store.unlockStrandedQueues(1000)).toEqual(["tenxgraph:thread:qc-stranded"]);
    expect(await api.store.unlockStrandedQueues(1000)).toEqual([]);

    await db.query(`UPDATE tenxgraph_runs SET status = 'pending' WHERE run_id = $1`, [live.queued]);
    expect(await api.store.unlockStrandedQueues(1000)).toEqual(["tenxgraph:thread:qc-live"]);
    await db.query("SELECT graphile_worker.force_unlock_workers(ARRAY['gone-worker'])");
    await withWorker(async () => {
      expect(await joinRun("qc-stranded", stranded.queued)).toBe("completed");
      expect(await joinRun("qc-live", live.queued)).toBe("completed");
      expect(await joinRun("qc-held", held.queued)).toBe("completed");
    });
  });
});
