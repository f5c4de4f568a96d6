import { EventEmitter } from "node:events";
import type pg from "pg";
import {
  QUEUE_COLLECTION_LOCK,
  QUEUE_HOLD_PREFIX,
  QUEUE_PREFIX,
  threadQueueName,
  type Queryable,
} from "./run-db.js";

/** The most idle queues one collection deletes, so that its transaction stays short. */
const QUEUE_COLLECTION_BATCH = 10_000;

/**
 * Deletes the idle queues of threads (in the caller's transaction): the queue rows with no job
 * and no lock, or only those of them in `queueIds`. Returns how many, or `null` when a job was
 * being queued at that moment (the collection is skipped, not waited for: the next one
 * collects them).
 *
 * Why: graphile-worker keeps a queue row per queue name, and each thread has its own, so a
 * row stays for every thread that ever had a background run. Each job pick-up (`get_job`)
 * locks every queue row that is not locked, and each lock is a WAL record, so without this its
 * cost grows with every such thread: 0.5 ms of PostgreSQL's time with 100 of them, 4.4 ms with
 * 10,000, and the pick-ups of all workers wait on each other's locks. graphile-worker's own
 * `GC_JOB_QUEUES` cleanup races `add_job` (see {@link QUEUE_COLLECTION_LOCK}); this one holds
 * that lock.
 *
 * The lock is taken in a statement of its own, before the delete, so that the delete's
 * snapshot sees every job queued before the lock was free.
 */
export async function collectIdleQueues(
  client: pg.PoolClient,
  queueIds?: readonly number[],
): Promise<number | null> {
  const { rows } = await client.query<{ locked: boolean }>(
    `SELECT pg_try_advisory_xact_lock(${QUEUE_COLLECTION_LOCK}) AS locked`,
  );
  if (rows[0]?.locked !== true) return null;
  // Given ids, the queue rows are found by their key: no read of every queue row.
  const which = queueIds ? "q.id = ANY ($3::int[])" : "true";
  const { rowCount } = await client.query(
    `DELETE FROM graphile_worker._private_job_queues
      WHERE id IN (
        SELECT q.id FROM graphile_worker._private_job_queues AS q
         WHERE ${which} AND q.locked_at IS NULL AND starts_with(q.queue_name, $1)
           AND NOT EXISTS (
             SELECT 1 FROM graphile_worker._private_jobs AS j WHERE j.job_queue_id = q.id)
         LIMIT $2
         FOR UPDATE SKIP LOCKED)`,
    [QUEUE_PREFIX, QUEUE_COLLECTION_BATCH, ...(queueIds ? [queueIds] : [])],
  );
  return rowCount ?? 0;
}

/** How long the queues of the jobs a worker completed wait to be collected together, ms. */
const COLLECTION_AFTER_JOBS_MS = 100;

/**
 * Collects the queue of each job the worker completes, soon after, in batches: a thread's
 * queue is idle from the moment its last job completes, and left to the periodic collection
 * (every 5 heartbeats) it would be locked by every job pick-up until then: with runs ending at
 * 150 a second, 750 queues, whose locks wrote 75% of a one-step run's WAL. `events` is
 * graphile-worker's emitter for `run()`; `collect` deletes those of the ids that are idle,
 * answering `null` when a job was being queued (they are tried again, later).
 */
export class QueueCollectionAfterJobs {
  readonly events = new EventEmitter();
  #queueIds: number[] = [];
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(
    private readonly collect: (queueIds: number[]) => Promise<number | null>,
    private readonly onError: (error: unknown) => void,
  ) {
    this.events.on("job:complete", ({ job }: { job: { job_queue_id: number | null } }) => {
      if (job.job_queue_id === null) return;
      this.#queueIds.push(job.job_queue_id);
      this.#schedule();
    });
  }

  /** No collection after this one; queues still waiting are the periodic collection's. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(): void {
    if (this.#timer || this.#stopped || this.#queueIds.length === 0) return;
    this.#timer = setTimeout(() => void this.#run(), COLLECTION_AFTER_JOBS_MS);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    const queueIds = this.#queueIds;
    this.#queueIds = [];
    try {
      if ((await this.collect(queueIds)) === null) this.#queueIds.push(...queueIds);
    } catch (error) {
      this.onError(error);
    }
    this.#timer = null;
    this.#schedule();
  }
}

/**
 * Unlocks the threads' queues locked longer than `staleAfterMs` with no job locked in them and
 * no live run on their thread; returns their names.
 *
 * Why: graphile-worker deletes a job by its id when its task ends, even when another worker
 * holds it by then, and that worker's own completion then finds no job and never unlocks the
 * queue: graphile-worker frees such a lock only after 4 hours, holding back every later run of
 * the thread. The sweep leaves no freed job for a slow worker to delete this way (a pending
 * run's gets a new job, see `queueNewJob`; an ended run's is deleted), so this is a last guard,
 * for a path not foreseen. A queue is locked together with a job in it, so one locked past the
 * stale window with no job locked is such a queue. While a live run is on its thread it stays
 * locked, so the thread's runs still run one at a time; so does a queue held for the thread's
 * first run while that run is pending or running (it may wait for a worker after a takeover),
 * unless the run's own job is in it (queued there by a version before the hold, which would
 * wait for itself).
 *
 * One statement, each queue row locked with SKIP LOCKED, so workers doing it at once do not wait
 * on each other. It reads every locked queue row (about 1 ms with 10,000 thread queues), so a
 * worker does it with its idle-queue collection, not every heartbeat.
 */
export async function unlockStrandedQueues(db: Queryable, staleAfterMs: number): Promise<string[]> {
  const { rows } = await db.query<{ queue_name: string }>(
    `UPDATE graphile_worker._private_job_queues SET locked_by = NULL, locked_at = NULL
      WHERE id IN (
        SELECT q.id FROM graphile_worker._private_job_queues AS q
         WHERE q.locked_by IS NOT NULL AND starts_with(q.queue_name, $1)
           AND q.locked_at < now() - make_interval(secs => $2 / 1000.0)
           AND NOT EXISTS (
             SELECT 1 FROM graphile_worker._private_jobs AS j
              WHERE j.job_queue_id = q.id AND j.locked_by IS NOT NULL)
           AND NOT EXISTS (
             SELECT 1 FROM tenxgraph_runs AS live
              WHERE ${threadQueueName("live.thread_id")} = q.queue_name
                AND live.status = 'running'
                AND live.heartbeat_at >= now() - make_interval(secs => $2 / 1000.0))
           AND NOT EXISTS (
             SELECT 1 FROM tenxgraph_runs AS first
              WHERE starts_with(q.locked_by, $3)
                AND first.run_id = substr(q.locked_by, length($3) + 1)
                AND first.status IN ('pending', 'running')
                AND NOT EXISTS (
                  SELECT 1 FROM graphile_worker._private_jobs AS own
                   WHERE own.key = 'tenxgraph_run:' || first.run_id AND own.job_queue_id = q.id))
         FOR UPDATE OF q SKIP LOCKED)
      RETURNING queue_name`,
    [QUEUE_PREFIX, staleAfterMs, QUEUE_HOLD_PREFIX],
  );
  return rows.map((r) => r.queue_name);
}
