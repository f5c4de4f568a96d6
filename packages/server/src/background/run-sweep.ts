import type pg from "pg";
import type { StopReason } from "./run-record.js";
import { addJob, endPending, RUN_TASK, updateRun, type Queryable } from "./run-db.js";

/** Runs held by a worker whose heartbeat is older than `$1` ms. */
const STALE_RUNS = `FROM tenxgraph_runs
  WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1 / 1000.0)`;

/** Jobs locked longer than `$1` ms by a worker holding no live run (see below). */
const ORPHANED_JOBS = `FROM graphile_worker.jobs j
  LEFT JOIN tenxgraph_runs r ON j.key = 'tenxgraph_run:' || r.run_id
  WHERE j.task_identifier = '${RUN_TASK}' AND j.locked_by IS NOT NULL
    AND j.locked_at < now() - make_interval(secs => $1 / 1000.0)
    AND (r.run_id IS NULL OR r.status <> 'running')
    AND NOT EXISTS (
      SELECT 1 FROM tenxgraph_runs live
       WHERE live.status = 'running' AND live.queue_worker_id = j.locked_by
         AND live.heartbeat_at >= now() - make_interval(secs => $1 / 1000.0))`;

/**
 * Whether a sweep has anything to hand back: one statement, outside a transaction, so the
 * sweep every worker runs every heartbeat costs one round trip while all are alive.
 */
export async function anythingStale(db: Queryable, staleAfterMs: number): Promise<boolean> {
  const { rows } = await db.query<{ stale: boolean }>({
    name: "tenxgraph_runs_anything_stale",
    text: `SELECT EXISTS (SELECT 1 ${STALE_RUNS}) OR EXISTS (SELECT 1 ${ORPHANED_JOBS}) AS stale`,
    values: [staleAfterMs],
  });
  return rows[0]?.stale === true;
}

/**
 * Hands the runs of workers whose heartbeat is older than `staleAfterMs` back to the queue (in
 * the caller's transaction): each becomes `pending` again, the dead worker's graphile-worker
 * locks are released, and the run's job is queued anew. Returns the runs handed back or freed.
 */
export async function sweepStaleRuns(
  client: pg.PoolClient,
  staleAfterMs: number,
): Promise<string[]> {
  const { rows } = await client.query<{
    run_id: string;
    worker_id: string | null;
    queue_worker_id: string | null;
    stop_requested: StopReason | null;
  }>(
    `SELECT run_id, worker_id, queue_worker_id, stop_requested ${STALE_RUNS}
      FOR UPDATE SKIP LOCKED`,
    [staleAfterMs],
  );
  // A worker can also die holding a job whose run is not `running`: locked but not begun
  // yet, or ended but not yet marked done. Nothing heartbeats such a run, and graphile-worker
  // frees a lock only after 4 hours, so the run stays `pending` (and its thread's queue
  // locked) that long. A live worker holds such a job for a moment; one held past the stale
  // window, by a worker with no live run, is a dead worker's.
  const orphaned = await client.query<OrphanedJob>(
    `SELECT j.id::text AS job_id, j.locked_by, r.run_id, r.status ${ORPHANED_JOBS}`,
    [staleAfterMs],
  );
  if (rows.length === 0 && orphaned.rows.length === 0) return [];
  const queueWorkers = [
    ...new Set(
      [...rows.map((r) => r.queue_worker_id), ...orphaned.rows.map((r) => r.locked_by)].filter(
        (id): id is string => !!id,
      ),
    ),
  ];
  if (queueWorkers.length > 0) {
    await client.query("SELECT graphile_worker.force_unlock_workers($1::text[])", [queueWorkers]);
  }
  for (const row of rows) {
    // A stop asked of the dead worker's run still holds: it ends instead of running on.
    if (row.stop_requested) {
      const status = row.stop_requested === "cancel" ? "cancelled" : "interrupted";
      await endPending(client, row.run_id, status);
      continue;
    }
    await updateRun(
      client,
      { set: "status = 'pending', updated_at = now()" },
      [row.run_id],
      [{ type: "run_requeued", reason: "worker_lost", workerId: row.worker_id }],
    );
    await queueNewJob(client, row.run_id);
  }
  await settleOrphanedJobs(client, orphaned.rows);
  const freed = orphaned.rows.flatMap((r) => (r.run_id ? [r.run_id] : []));
  return [...rows.map((r) => r.run_id), ...freed];
}

/** A job freed as orphaned, with its run unless the run is gone. */
type OrphanedJob = { job_id: string; locked_by: string } & (
  { run_id: string; status: string } | { run_id: null; status: null }
);

/**
 * A job freed as orphaned does not stay in the queue either (its worker may only be slow, see
 * `queueNewJob`): a pending run's gets a new one, and the job of an ended run, or of one that is
 * gone, is done, so it is deleted, as its task would have on finding the run not pending.
 */
async function settleOrphanedJobs(client: pg.PoolClient, jobs: OrphanedJob[]): Promise<void> {
  const done = jobs.filter((job) => job.status !== "pending").map((job) => job.job_id);
  if (done.length > 0) {
    await client.query("SELECT graphile_worker.complete_jobs($1::bigint[])", [done]);
  }
  for (const job of jobs) {
    if (job.status === "pending") await queueNewJob(client, job.run_id);
  }
}

/**
 * Queues a new job for the run, not its old one again: graphile-worker deletes a job by its id
 * when its task ends, and a worker that was only slow ends its task (giving the run up, as
 * `beginAttempt` refuses a worker that no longer holds its job) when it wakes. Kept, the job
 * would go with it: from under the worker running it by then, whose completion would then leave
 * the thread's queue locked, or from the queue, leaving the run pending with no job, forever.
 * The old job is unlocked by now (`force_unlock_workers`), so `remove_job` deletes it.
 */
async function queueNewJob(client: pg.PoolClient, runId: string): Promise<void> {
  await client.query("SELECT graphile_worker.remove_job('tenxgraph_run:' || $1)", [runId]);
  await addJob(client, runId);
}
