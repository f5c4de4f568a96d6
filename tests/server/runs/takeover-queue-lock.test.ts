/**
 * A worker that was only slow, not dead (SIGSTOP here: a long GC pause, a starved machine), has
 * its run handed to another worker; when it wakes, it gives the run up, and graphile-worker then
 * deletes the job of its task by the job's id. The hand-back used to queue the same job again,
 * so that deletion took the run's job: held by the other worker by then, whose own completion
 * then found no job and left the thread's queue locked (for 4 hours: every later run of the
 * thread waited), or still waiting, leaving the run pending with no job, forever. The hand-back
 * now queues a new job, and a freed job whose run ended is deleted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PgRunStore } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEffects } from "../../support/effect-log.js";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { until } from "../../support/until.js";
import { WorkerProcess } from "../../support/worker-process.js";
import { caller, userMessage } from "../support/http.js";
import type { RunWorkerParams } from "../support/run-worker.js";
import { startRunsApi, withTestWorker, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph, type Effect } from "../support/test-graph.js";

const RUN_WORKER = new URL("../support/run-worker.ts", import.meta.url);
/** How long send_receipt takes: the first worker is frozen, and the second works, within it. */
const MAILER_DELAY_MS = 3000;

describe("a worker frozen past the stale window, then woken", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-takeover-queue-"));
  const spec = freshStore("postgres", "takeover_queue_lock", dir);
  const effectLog = join(dir, "effects.jsonl");
  const checkpointer = openStore(spec);
  const graph = buildTestGraph({ effectLog }, checkpointer);
  const started: WorkerProcess[] = [];
  let api: RunsApi;
  let store: PgRunStore;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    api = await startRunsApi(graph, "takeover_queue_lock", { worker: false });
    store = api.store;
    call = caller(api.server.url);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(started.map((worker) => worker.kill()));
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  async function startWorker(workerId: string): Promise<WorkerProcess> {
    const params: RunWorkerParams = {
      store: spec,
      runsDsn: api.dsn,
      effectLog,
      mailerDelayMs: MAILER_DELAY_MS,
      workerId,
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
    };
    const worker = new WorkerProcess(RUN_WORKER, params);
    started.push(worker);
    await worker.waitForType("ready", 60_000);
    return worker;
  }

  /**
   * Freezes `worker` (SIGSTOP) while `work` runs, wakes it (SIGCONT) whatever happened, then
   * waits for it to give up the run it held, which was taken over meanwhile.
   */
  async function frozenWhile<T>(worker: WorkerProcess, work: () => Promise<T>): Promise<T> {
    worker.child.kill("SIGSTOP");
    let result: T;
    try {
      result = await work();
    } finally {
      worker.child.kill("SIGCONT");
    }
    await until(
      () => worker.stderr.includes("Run lost to another worker"),
      "the woken worker to give the run up",
    );
    return result;
  }

  async function postRun(threadId: string, order: number, strategy = "reject"): Promise<string> {
    const posted = await call("POST", `/v1/threads/${threadId}/runs`, {
      messages: [userMessage(`charge order ${order}`)],
      multitask_strategy: strategy,
    });
    expect(posted.status, posted.text).toBe(202);
    return posted.body.data.run_id as string;
  }

  async function run(threadId: string, runId: string) {
    const answer = await call("GET", `/v1/threads/${threadId}/runs/${runId}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as { status: string; worker_id: string | null; attempts: number };
  }

  /** The thread's queue row as graphile-worker keeps it. */
  async function queueOf(threadId: string) {
    const { rows } = await store.pool.query<{ locked_by: string | null }>(
      `SELECT locked_by FROM graphile_worker._private_job_queues WHERE queue_name = $1`,
      [`tenxgraph:thread:${threadId}`],
    );
    return rows[0] ?? null;
  }

  it("leaves its thread's queue unlocked once the run ends: the thread's next run runs after it", async () => {
    const slow = await startWorker("slow");
    const first = await postRun("frozen-1", 8001);
    // The charge is recorded; the receipt is being sent when the worker freezes. Recorded, not
    // only made: a freeze between the charge and its record would leave it in doubt, and the
    // other worker would charge again, as after a crash there.
    await until(async () => {
      const ledger = await call("GET", "/v1/threads/frozen-1/ledger");
      const entries = (ledger.body?.data?.entries ?? []) as { tool_name: string; status: string }[];
      return entries.some((e) => e.tool_name === "charge_card" && e.status === "completed");
    }, "the charge recorded");
    const other = await frozenWhile(slow, async () => {
      const other = await startWorker("other");
      // The other worker hands the run back and takes it (attempt 2, in send_receipt again).
      await until(async () => {
        const now = await run("frozen-1", first);
        return now.worker_id === "other" && now.status === "running" ? now : null;
      }, "the run taken over by the other worker");
      return other;
    });
    // Its job is gone now, though attempt 2 still runs: the thread's next run, queued now, must
    // wait for it (the queue stays locked while a live run is on the thread), then run.
    const next = await postRun("frozen-1", 8002, "enqueue");
    await withTestWorker(graph, store, () =>
      until(async () => (await run("frozen-1", next)).status === "completed", "the next run", {
        timeoutMs: 20_000,
      }),
    );
    expect(await run("frozen-1", first)).toMatchObject({
      status: "completed",
      attempts: 2,
      worker_id: "other",
    });
    const { rows } = await store.pool.query<{ first_end: Date; next_start: Date }>(
      `SELECT (SELECT updated_at FROM tenxgraph_runs WHERE run_id = $1) AS first_end,
              (SELECT min(created_at) FROM tenxgraph_run_events
                WHERE run_id = $2 AND event->>'type' = 'run_attempt') AS next_start`,
      [first, next],
    );
    expect(rows[0]!.next_start.getTime()).toBeGreaterThanOrEqual(rows[0]!.first_end.getTime());
    expect((await queueOf("frozen-1"))?.locked_by ?? null).toBeNull();
    await Promise.all([slow.kill(), other.kill()]);
    expect(readEffects<Effect>(effectLog).filter((e) => e.line.includes("charged"))).toHaveLength(
      2,
    );
  }, 90_000);

  it("keeps the run's job when it wakes before another worker took the run: the run still ends", async () => {
    const slow = await startWorker("slow-2");
    const first = await postRun("frozen-2", 8101);
    await until(
      () => readEffects<Effect>(effectLog).some((e) => e.line.includes("order 8101")),
      "the charge",
    );
    // The other worker is busy with another thread's run when it hands this one back, so the
    // run's job waits in the queue while the frozen worker wakes and gives the run up.
    const other = await frozenWhile(slow, async () => {
      await postRun("busy-2", 8102);
      const other = await startWorker("other-2");
      await until(async () => (await run("frozen-2", first)).status === "pending", "the hand-back");
      return other;
    });
    await until(async () => (await run("frozen-2", first)).status === "completed", "the run", {
      timeoutMs: 20_000,
      context: () => `slow:\n${slow.stderr.slice(-1500)}\nother:\n${other.stderr.slice(-1500)}`,
    });
    expect((await run("frozen-2", first)).attempts).toBe(2);
    await Promise.all([slow.kill(), other.kill()]);
  }, 90_000);

  it("gives a pending run whose job was freed as orphaned a new job, which its old taker cannot begin", async () => {
    // A worker took the run's job, then froze before beginning the attempt (made directly here):
    // the job is locked past the stale window by a worker with no live run.
    const runId = await postRun("orphaned-1", 8201);
    const jobOf = async () =>
      (
        await store.pool.query<{ id: string; locked_by: string | null }>(
          `SELECT id::text AS id, locked_by FROM graphile_worker._private_jobs
            WHERE key = 'tenxgraph_run:' || $1`,
          [runId],
        )
      ).rows;
    const [taken] = await jobOf();
    await store.pool.query(
      `UPDATE graphile_worker._private_jobs
          SET locked_by = 'frozen-taker', locked_at = now() - interval '1 minute' WHERE id = $1`,
      [taken!.id],
    );
    expect(await store.sweepStale(1000)).toEqual([runId]);
    const [fresh] = await jobOf();
    expect(fresh).toMatchObject({ locked_by: null });
    expect(fresh!.id).not.toBe(taken!.id);
    // The frozen worker wakes: its job is not locked by it any more, so it does not begin.
    const begun = await store.beginAttempt(
      runId,
      "frozen-worker",
      { id: taken!.id, lockedBy: "frozen-taker" },
      async () => 0,
    );
    expect(begun).toBeNull();
    expect(await run("orphaned-1", runId)).toMatchObject({ status: "pending", attempts: 0 });
    await withTestWorker(graph, store, () =>
      until(async () => (await run("orphaned-1", runId)).status === "completed", "the run"),
    );
  });

  it("deletes the job of an ended run freed as orphaned: its old taker's completion has nothing to take", async () => {
    // A worker ended the run, then froze before marking its job done (made directly here): the
    // job and the thread's queue stay locked past the stale window by a worker with no live run.
    const ended = await postRun("orphaned-2", 8301);
    const { rows: taken } = await store.pool.query<{ id: string; job_queue_id: number }>(
      `UPDATE graphile_worker._private_jobs
          SET locked_by = 'frozen-ender', locked_at = now() - interval '1 minute'
        WHERE key = 'tenxgraph_run:' || $1
        RETURNING id::text AS id, job_queue_id`,
      [ended],
    );
    await store.pool.query(
      `UPDATE graphile_worker._private_job_queues
          SET locked_by = 'frozen-ender', locked_at = now() - interval '1 minute' WHERE id = $1`,
      [taken[0]!.job_queue_id],
    );
    await store.pool.query(
      `UPDATE tenxgraph_runs SET status = 'completed', updated_at = now() WHERE run_id = $1`,
      [ended],
    );
    const next = await postRun("orphaned-2", 8302);
    expect(await store.sweepStale(1000)).toEqual([ended]);
    // Kept (only unlocked), the job would be taken again, and the frozen worker's completion,
    // which deletes its job by id, could take it from under that worker.
    const { rows: left } = await store.pool.query(
      `SELECT 1 FROM graphile_worker._private_jobs WHERE id = $1`,
      [taken[0]!.id],
    );
    expect(left).toHaveLength(0);
    expect((await queueOf("orphaned-2"))?.locked_by ?? null).toBeNull();
    await withTestWorker(graph, store, () =>
      until(async () => (await run("orphaned-2", next)).status === "completed", "the next run"),
    );
    expect((await run("orphaned-2", ended)).status).toBe("completed");
  });
});
