import { hostDatabaseError } from "@tenxgraph/postgres";
import type pg from "pg";
import { RunEndedError, ThreadBusyError } from "./run-errors.js";
import { migrateRunSchema } from "./run-schema.js";
import {
  needsBaseVersion,
  type AttemptOutcome,
  type AttemptRef,
  type HeartbeatAnswer,
  type MultitaskStrategy,
  type BackgroundRunEvent,
  type BackgroundRunStatus,
  type QueueJob,
  type RunRecord,
  type RunRequest,
  type StopReason,
  type StoredRunEvent,
} from "./run-record.js";
import {
  addJob,
  addJobCall,
  declineJob,
  askStop,
  endPending,
  RUN_EVENTS_CHANNEL,
  RUN_COLUMNS,
  RunDb,
  toRecord,
  updateRun,
  type RunDbOptions,
  type RunRow,
} from "./run-db.js";
import { collectIdleQueues, unlockStrandedQueues } from "./run-queue-collection.js";
import { anythingStale, sweepStaleRuns } from "./run-sweep.js";

export { RUN_EVENTS_CHANNEL, RUN_TASK } from "./run-db.js";
export { RunEndedError, ThreadBusyError } from "./run-errors.js";

/**
 * Background runs on PostgreSQL: the run rows (status, owner, attempts, heartbeats), their
 * events for streaming, and their jobs in graphile-worker's queue, written together so a run
 * and its job never part. Every write a worker makes is fenced by its attempt: a worker that
 * lost a run (its heartbeat went stale and another took it) can change nothing of it.
 */
export class PgRunStore {
  readonly #db: RunDb;
  #ready: Promise<void> | null = null;

  constructor(options: RunDbOptions) {
    this.#db = new RunDb(options);
  }

  /** The runs' connection pool (graphile-worker's runner shares it). */
  get pool(): pg.Pool {
    return this.#db.pool;
  }

  /** Creates or migrates the tables (graphile-worker's too). Idempotent; run on first use. */
  setup(): Promise<void> {
    this.#ready ??= migrateRunSchema(this.#db).catch((error: unknown) => {
      this.#ready = null;
      throw error;
    });
    return this.#ready;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /**
   * Queues a run, applying the multitask strategy against the thread's active runs under a
   * per-thread lock, so two requests racing on one idle thread cannot both be "the only one".
   * `interrupt` ends runs that have not started (as `interrupted`) and asks the running one to
   * stop; the new run's job waits behind it in the thread's queue.
   */
  async createRun(run: {
    runId: string;
    threadId: string;
    userId: string | null;
    strategy: MultitaskStrategy;
    request: RunRequest;
  }): Promise<RunRecord> {
    await this.setup();
    return this.#db.transaction("createRun", async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
        `tenxgraph_runs:${run.threadId}`,
      ]);
      const active = () =>
        client.query<{ run_id: string; status: BackgroundRunStatus }>(
          `SELECT run_id, status FROM tenxgraph_runs
            WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY created_at`,
          [run.threadId],
        );
      if (run.strategy === "interrupt") {
        for (const other of (await active()).rows) {
          if (other.status === "pending") await endPending(client, other.run_id);
          else await askStop(client, other.run_id, "interrupt");
        }
      }
      // The run and its job in one statement; the job is due when the run was created. A
      // `reject` run is only inserted if the thread has no active run (read under the lock).
      // A run with one ahead of it waits in the thread's queue; the first runs outside it (see
      // QUEUE_PREFIX).
      const { rows } = await client.query<RunRow>(
        `WITH ahead AS (
           SELECT EXISTS (SELECT 1 FROM tenxgraph_runs
                           WHERE thread_id = $2 AND status IN ('pending', 'running')) AS any),
         run AS (
           INSERT INTO tenxgraph_runs
                  (run_id, thread_id, user_id, status, multitask_strategy, request, queued)
           SELECT $1::text, $2::text, $3::text, 'pending', $4::text, $5::jsonb, ahead.any
             FROM ahead WHERE $4::text <> 'reject' OR NOT ahead.any
           RETURNING *)
         SELECT run.*, (${addJobCall("run")}).id AS job_id FROM run`,
        [run.runId, run.threadId, run.userId, run.strategy, JSON.stringify(run.request)],
      );
      if (!rows[0]) throw new ThreadBusyError(run.threadId, (await active()).rows[0]!.run_id);
      return toRecord(rows[0]);
    });
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    await this.setup();
    const rows = await this.#db.query<RunRow>(
      "getRun",
      `SELECT ${RUN_COLUMNS} FROM tenxgraph_runs WHERE run_id = $1`,
      [runId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** A thread's runs, newest first. */
  async listRuns(threadId: string, page: { limit: number; offset: number }): Promise<RunRecord[]> {
    await this.setup();
    const rows = await this.#db.query<RunRow>(
      "listRuns",
      `SELECT ${RUN_COLUMNS} FROM tenxgraph_runs WHERE thread_id = $1
        ORDER BY created_at DESC, run_id DESC LIMIT $2 OFFSET $3`,
      [threadId, page.limit, page.offset],
    );
    return rows.map(toRecord);
  }

  /**
   * Cancels a run: one not started yet ends `cancelled` at once; a running one is asked to stop
   * (its worker sees it at its next heartbeat and stops the run like `app.stop`).
   */
  async cancelRun(runId: string): Promise<RunRecord> {
    await this.setup();
    return this.#db.transaction("cancelRun", async (client) => {
      const { rows } = await client.query<RunRow>(
        "SELECT * FROM tenxgraph_runs WHERE run_id = $1 FOR UPDATE",
        [runId],
      );
      const run = rows[0];
      if (!run) throw new RunEndedError(runId, "cancelled");
      if (run.status === "pending") await endPending(client, runId, "cancelled");
      else if (run.status === "running") await askStop(client, runId, "cancel");
      else throw new RunEndedError(runId, run.status);
      const after = await client.query<RunRow>("SELECT * FROM tenxgraph_runs WHERE run_id = $1", [
        runId,
      ]);
      return toRecord(after.rows[0]!);
    });
  }

  /** Deletes an ended run with its events; `false` when it has not ended (or is gone). */
  async deleteRun(runId: string): Promise<boolean> {
    await this.setup();
    const rows = await this.#db.query(
      "deleteRun",
      `DELETE FROM tenxgraph_runs WHERE run_id = $1 AND status NOT IN ('pending', 'running')
        RETURNING run_id`,
      [runId],
    );
    return rows.length > 0;
  }

  /**
   * Removes a thread's runs with their events and jobs, under the lock `createRun` takes: runs
   * not started never run (so none re-creates the thread), and a running run's worker loses it
   * at its next heartbeat or event, ending it without another write. Returns the runs removed.
   */
  async deleteThreadRuns(threadId: string): Promise<string[]> {
    await this.setup();
    return this.#db.transaction("deleteThreadRuns", async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
        `tenxgraph_runs:${threadId}`,
      ]);
      const { rows } = await client.query<{ run_id: string }>(
        "DELETE FROM tenxgraph_runs WHERE thread_id = $1 RETURNING run_id",
        [threadId],
      );
      const runIds = rows.map((r) => r.run_id);
      if (runIds.length === 0) return [];
      // A job a worker holds is kept from running again; any other is deleted.
      await client.query(
        "SELECT graphile_worker.remove_job('tenxgraph_run:' || id) FROM unnest($1::text[]) AS id",
        [runIds],
      );
      // Streams and joins of these runs wake and find them gone.
      await client.query(`SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, [
        RUN_EVENTS_CHANNEL,
        runIds,
      ]);
      return runIds;
    });
  }

  /**
   * Begins an attempt on a pending run for `workerId`, taken through graphile-worker's `job`
   * (`null`: none): the run is then `running`, held by the worker's heartbeats, and every later
   * write of the attempt is fenced by its number. `null` when the run is not pending (ended,
   * cancelled, or held by another worker), or when `job` is no longer locked by the worker that
   * took it (a sweep freed it: the worker was too slow, and the run has a new job).
   */
  async beginAttempt(
    runId: string,
    workerId: string,
    job: QueueJob | null,
    threadVersion: (threadId: string) => Promise<number>,
  ): Promise<RunRecord | null> {
    await this.setup();
    // The hold and its `run_attempt` event in one statement: a worker that dies between them
    // must not leave an attempt the stream never announced.
    const held = await this.#db.update(
      "beginAttempt",
      {
        set: `status = 'running', worker_id = $3, queue_worker_id = $4, attempts = attempts + 1,
              heartbeat_at = now(), updated_at = now()`,
        where: job
          ? `status = 'pending' AND EXISTS (SELECT 1 FROM graphile_worker._private_jobs AS j
                                             WHERE j.id = $5::bigint AND j.locked_by = $4)`
          : "status = 'pending'",
        wakeWorker: true,
      },
      job ? [runId, workerId, job.lockedBy, job.id] : [runId, workerId, null],
      [{ type: "run_attempt", attempt: 0, workerId }],
    );
    if (!held) return null;
    if (held.base_version === null && needsBaseVersion(held.request)) {
      // Read once the attempt holds the run and before it runs a node, so no attempt of this
      // run wrote to the thread yet (one that died before this write never ran a node).
      held.base_version = String(await threadVersion(held.thread_id));
      const kept = await this.#db.query(
        "beginAttempt",
        `UPDATE tenxgraph_runs SET base_version = $2
          WHERE run_id = $1 AND attempts = $3 AND worker_id = $4 AND status = 'running'
          RETURNING 1`,
        [runId, held.base_version, held.attempts, workerId],
      );
      if (kept.length === 0) return null;
    }
    return toRecord(held);
  }

  /**
   * Hands a pending run back to the queue without an attempt: its worker's graph cannot
   * continue its thread (a rolling deploy), so the job is flagged `flag`, which that worker
   * and its like skip, for a worker of another version (see `declineJob`).
   */
  async declineRun(runId: string, flag: string): Promise<void> {
    await this.#db.transaction("declineRun", (client) => declineJob(client, runId, flag));
  }

  /**
   * Renews the worker's hold on its runs and reads any stop asked for them. A run missing from
   * the answer is no longer this worker's: another took it over after its heartbeat went stale.
   */
  async heartbeat(workerId: string, attempts: readonly AttemptRef[]): Promise<HeartbeatAnswer> {
    const held = new Map<string, StopReason | null>();
    if (attempts.length === 0) return { held };
    const rows = await this.#db.query<{ run_id: string; stop_requested: StopReason | null }>(
      "heartbeat",
      `UPDATE tenxgraph_runs AS r SET heartbeat_at = now()
         FROM unnest($2::text[], $3::int[]) AS mine(run_id, attempt)
        WHERE r.run_id = mine.run_id AND r.attempts = mine.attempt AND r.worker_id = $1
          AND r.status = 'running'
        RETURNING r.run_id, r.stop_requested`,
      [workerId, attempts.map((a) => a.runId), attempts.map((a) => a.attempt)],
    );
    for (const row of rows) held.set(row.run_id, row.stop_requested);
    return { held };
  }

  /**
   * Hands the runs of workers whose heartbeat is older than `staleAfterMs` back to the queue:
   * each becomes `pending` again, the dead worker's graphile-worker locks are released, and the
   * run's job is queued anew (which wakes an idle worker through LISTEN/NOTIFY). One
   * transaction, so any worker may sweep and a run is handed back once.
   */
  async sweepStale(staleAfterMs: number): Promise<string[]> {
    await this.setup();
    const stale = await anythingStale(this.#db.pool, staleAfterMs).catch((error: unknown) => {
      throw hostDatabaseError("sweepStale", this.#db.pool, error);
    });
    if (!stale) return [];
    return this.#db.transaction("sweepStale", (client) => sweepStaleRuns(client, staleAfterMs));
  }

  /**
   * Deletes the threads' idle queues, or only those in `queueIds` (see `collectIdleQueues`);
   * `null`: left to the next one.
   */
  async collectIdleQueues(queueIds?: readonly number[]): Promise<number | null> {
    await this.setup();
    return this.#db.transaction("collectIdleQueues", (client) =>
      collectIdleQueues(client, queueIds),
    );
  }

  /** Unlocks the threads' queues a takeover's end left locked (see `unlockStrandedQueues`). */
  async unlockStrandedQueues(staleAfterMs: number): Promise<string[]> {
    await this.setup();
    return unlockStrandedQueues(this.#db.pool, staleAfterMs).catch((error: unknown) => {
      throw hostDatabaseError("unlockStrandedQueues", this.#db.pool, error);
    });
  }

  /**
   * Ends the attempt: a final status (with its `run_status` event, the stream's last), or back
   * to the queue for another worker. `false` when the attempt no longer holds the run.
   */
  async finishAttempt(
    ref: AttemptRef,
    outcome: AttemptOutcome,
    events: readonly BackgroundRunEvent[] = [],
  ): Promise<boolean> {
    const fenced = {
      set: "status = $5, error = $6, updated_at = now()",
      where: "attempts = $3 AND worker_id = $4 AND status = 'running'",
    };
    const values = (status: BackgroundRunStatus, error: RunRecord["error"]) =>
      [ref.runId, ref.attempt, ref.workerId, status, error && JSON.stringify(error)] as [
        string,
        ...unknown[],
      ];
    if (outcome.kind === "final") {
      // The status, the attempt's last events and the final `run_status` in one statement.
      const ended = await this.#db.update(
        "finishAttempt",
        fenced,
        values(outcome.status, outcome.error ?? null),
        [
          ...events,
          {
            type: "run_status",
            status: outcome.status,
            ...(outcome.error ? { error: outcome.error } : {}),
          },
        ],
      );
      return ended !== null;
    }
    return this.#db.transaction("finishAttempt", async (client) => {
      const run = await updateRun(client, fenced, values("pending", null), [
        ...events,
        { type: "run_requeued", reason: outcome.reason, workerId: ref.workerId },
      ]);
      if (!run) return false;
      await addJob(client, ref.runId);
      return true;
    });
  }

  /**
   * Appends an attempt's events, numbered on from the run's last. `false` (nothing written)
   * when the attempt no longer holds the run.
   */
  async appendEvents(ref: AttemptRef, events: readonly BackgroundRunEvent[]): Promise<boolean> {
    if (events.length === 0) return true;
    const run = await this.#db.update(
      "appendEvents",
      { where: "attempts = $3 AND worker_id = $4 AND status = 'running'" },
      [ref.runId, ref.attempt, ref.workerId],
      events,
    );
    return run !== null;
  }

  /** The run's events after `afterSeq`, in order. */
  async readEvents(runId: string, afterSeq: number, limit = 500): Promise<StoredRunEvent[]> {
    await this.setup();
    const rows = await this.#db.query<{ seq: string; event: BackgroundRunEvent }>(
      "readEvents",
      `SELECT seq, event FROM tenxgraph_run_events
        WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [runId, afterSeq, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), event: r.event }));
  }
}
