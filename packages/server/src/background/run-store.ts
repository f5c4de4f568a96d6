import pg from "pg";
import { migrateRunSchema } from "./run-schema.js";
import {
  needsBaseVersion,
  type MultitaskStrategy,
  type RunEvent,
  type RunRecord,
  type RunRequest,
  type RunStatus,
  type StopReason,
  type StoredRunEvent,
} from "./run-record.js";

/** The graphile-worker task that runs one background run; its payload is `{ runId }`. */
export const RUN_TASK = "tenxgraph_run";
/** The channel a worker notifies when it appends events to a run. */
export const RUN_EVENTS_CHANNEL = "tenxgraph_run_events";

/**
 * Runs of one thread share a graphile-worker queue: the queue runs its jobs one at a time, in
 * order, which is "one active run per thread" for `enqueue` (and keeps a taken-over run ahead
 * of the runs queued behind it).
 */
function queueName(threadId: string): string {
  return `tenxgraph:thread:${threadId}`;
}

/** A new run on a thread whose active run the strategy (`reject`) does not let it pass. */
export class ThreadBusyError extends Error {
  readonly code = "THREAD_BUSY";
  constructor(
    readonly threadId: string,
    readonly activeRunId: string,
  ) {
    super(
      `Thread '${threadId}' already has an active run (${activeRunId}); send ` +
        `multitask_strategy "enqueue" to run after it or "interrupt" to stop it first`,
    );
  }
}

/** A cancel or other change asked of a run that has already ended. */
export class RunEndedError extends Error {
  readonly code = "RUN_ENDED";
  constructor(
    readonly runId: string,
    readonly status: RunStatus,
  ) {
    super(`Run '${runId}' has already ended (${status})`);
  }
}

/** What a worker is told about its runs at a heartbeat. */
export interface HeartbeatAnswer {
  /** Runs still held, with any stop asked for them. */
  held: Map<string, StopReason | null>;
}

/** How an attempt ended, for {@link PgRunStore.finishAttempt}. */
export type AttemptOutcome =
  | { kind: "final"; status: Exclude<RunStatus, "pending" | "running">; error?: RunRecord["error"] }
  | { kind: "requeue"; reason: "drain" };

/** The attempt a worker holds: the fence of every write it makes to the run. */
export interface AttemptRef {
  runId: string;
  attempt: number;
  workerId: string;
}

/**
 * Background runs on PostgreSQL: the run rows (status, owner, attempts, heartbeats), their
 * events for streaming, and their jobs in graphile-worker's queue, written together so a run
 * and its job never part. Every write a worker makes is fenced by its attempt: a worker that
 * lost a run (its heartbeat went stale and another took it) can change nothing of it.
 */
export class PgRunStore {
  readonly pool: pg.Pool;
  #ready: Promise<void> | null = null;

  constructor(options: { postgresDsn: string; maxConnections?: number } | { pool: pg.Pool }) {
    this.pool =
      "pool" in options
        ? options.pool
        : new pg.Pool({
            connectionString: options.postgresDsn,
            max: options.maxConnections ?? 10,
            // A host cut off from PostgreSQL must find out, not hang: its heartbeat fails, and
            // the worker gives its runs up before another worker takes them.
            connectionTimeoutMillis: 5000,
            query_timeout: 10_000,
            keepAlive: true,
          });
    // An idle connection the server ends (restart, failover, pg_terminate_backend, idle
    // timeouts) is an 'error' on the pool, which would crash the process without a listener.
    // The pool drops that connection by itself and the next query opens a new one.
    if (!("pool" in options)) this.pool.on("error", () => {});
  }

  /** Creates or migrates the tables (graphile-worker's too). Idempotent; run on first use. */
  setup(): Promise<void> {
    this.#ready ??= migrateRunSchema(this.pool).catch((error: unknown) => {
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
    return this.#transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
        `tenxgraph_runs:${run.threadId}`,
      ]);
      const active = await client.query<{ run_id: string; status: RunStatus }>(
        `SELECT run_id, status FROM tenxgraph_runs
          WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY created_at`,
        [run.threadId],
      );
      if (active.rows.length > 0 && run.strategy === "reject") {
        throw new ThreadBusyError(run.threadId, active.rows[0]!.run_id);
      }
      if (run.strategy === "interrupt") {
        for (const other of active.rows) {
          if (other.status === "pending") await this.#endPending(client, other.run_id);
          else await this.#askStop(client, other.run_id, "interrupt");
        }
      }
      const { rows } = await client.query<RunRow>(
        `INSERT INTO tenxgraph_runs (run_id, thread_id, user_id, status, multitask_strategy, request)
         VALUES ($1, $2, $3, 'pending', $4, $5) RETURNING *`,
        [run.runId, run.threadId, run.userId, run.strategy, JSON.stringify(run.request)],
      );
      await this.#addJob(client, run.runId, run.threadId);
      return toRecord(rows[0]!);
    });
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    await this.setup();
    const { rows } = await this.pool.query<RunRow>(
      "SELECT * FROM tenxgraph_runs WHERE run_id = $1",
      [runId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** A thread's runs, newest first. */
  async listRuns(threadId: string, page: { limit: number; offset: number }): Promise<RunRecord[]> {
    await this.setup();
    const { rows } = await this.pool.query<RunRow>(
      `SELECT * FROM tenxgraph_runs WHERE thread_id = $1
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
    return this.#transaction(async (client) => {
      const { rows } = await client.query<RunRow>(
        "SELECT * FROM tenxgraph_runs WHERE run_id = $1 FOR UPDATE",
        [runId],
      );
      const run = rows[0];
      if (!run) throw new RunEndedError(runId, "cancelled");
      if (run.status === "pending") await this.#endPending(client, runId, "cancelled");
      else if (run.status === "running") await this.#askStop(client, runId, "cancel");
      else throw new RunEndedError(runId, run.status);
      const after = await client.query<RunRow>("SELECT * FROM tenxgraph_runs WHERE run_id = $1", [
        runId,
      ]);
      return toRecord(after.rows[0]!);
    });
  }

  /**
   * Removes a thread's runs with their events and jobs, under the lock `createRun` takes: runs
   * not started never run (so none re-creates the thread), and a running run's worker loses it
   * at its next heartbeat or event, ending it without another write. Returns the runs removed.
   */
  async deleteThreadRuns(threadId: string): Promise<string[]> {
    await this.setup();
    return this.#transaction(async (client) => {
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
   * Begins an attempt on a pending run for `workerId`: the run is then `running`, held by the
   * worker's heartbeats, and every later write of the attempt is fenced by its number. `null`
   * when the run is not pending (ended, cancelled, or held by another worker).
   */
  async beginAttempt(
    runId: string,
    workerId: string,
    queueWorkerId: string | null,
    threadVersion: (threadId: string) => Promise<number>,
  ): Promise<RunRecord | null> {
    await this.setup();
    // The hold, the thread's base version (first attempt, when needed) and the `run_attempt` event in one
    // transaction: a worker that dies between them must not leave an attempt the stream never
    // announced, and it is one commit before the run starts instead of three.
    const row = await this.#transaction(async (client) => {
      const { rows } = await client.query<RunRow>(
        `UPDATE tenxgraph_runs
            SET status = 'running', worker_id = $2, queue_worker_id = $3, attempts = attempts + 1,
                heartbeat_at = now(), updated_at = now()
          WHERE run_id = $1 AND status = 'pending' RETURNING *`,
        [runId, workerId, queueWorkerId],
      );
      const held = rows[0];
      if (!held) return null;
      if (held.base_version === null && needsBaseVersion(held.request)) {
        // Read once the attempt holds the run: nothing else of this run can write before it.
        held.base_version = String(await threadVersion(held.thread_id));
        await client.query("UPDATE tenxgraph_runs SET base_version = $2 WHERE run_id = $1", [
          runId,
          held.base_version,
        ]);
      }
      await this.#appendInTransaction(client, runId, held.attempts, [
        { type: "run_attempt", attempt: held.attempts, workerId },
      ]);
      return held;
    });
    return row ? toRecord(row) : null;
  }

  /**
   * Renews the worker's hold on its runs and reads any stop asked for them. A run missing from
   * the answer is no longer this worker's: another took it over after its heartbeat went stale.
   */
  async heartbeat(workerId: string, attempts: readonly AttemptRef[]): Promise<HeartbeatAnswer> {
    const held = new Map<string, StopReason | null>();
    if (attempts.length === 0) return { held };
    const { rows } = await this.pool.query<{ run_id: string; stop_requested: StopReason | null }>(
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
    return this.#transaction(async (client) => {
      const { rows } = await client.query<{
        run_id: string;
        thread_id: string;
        worker_id: string | null;
        queue_worker_id: string | null;
        stop_requested: StopReason | null;
      }>(
        `SELECT run_id, thread_id, worker_id, queue_worker_id, stop_requested FROM tenxgraph_runs
          WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1 / 1000.0)
          FOR UPDATE SKIP LOCKED`,
        [staleAfterMs],
      );
      // A worker can also die holding a job whose run is not `running`: locked but not begun
      // yet, or ended but not yet marked done. Nothing heartbeats such a run, and graphile-worker
      // frees a lock only after 4 hours, so the run stays `pending` (and its thread's queue
      // locked) that long. A live worker holds such a job for a moment; one held past the stale
      // window, by a worker with no live run, is a dead worker's.
      const orphaned = await client.query<{ locked_by: string; run_id: string | null }>(
        `SELECT j.locked_by, r.run_id FROM graphile_worker.jobs j
           LEFT JOIN tenxgraph_runs r ON j.key = 'tenxgraph_run:' || r.run_id
          WHERE j.task_identifier = $2 AND j.locked_by IS NOT NULL
            AND j.locked_at < now() - make_interval(secs => $1 / 1000.0)
            AND (r.run_id IS NULL OR r.status <> 'running')
            AND NOT EXISTS (
              SELECT 1 FROM tenxgraph_runs live
               WHERE live.status = 'running' AND live.queue_worker_id = j.locked_by
                 AND live.heartbeat_at >= now() - make_interval(secs => $1 / 1000.0))`,
        [staleAfterMs, RUN_TASK],
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
        await client.query("SELECT graphile_worker.force_unlock_workers($1::text[])", [
          queueWorkers,
        ]);
      }
      for (const row of rows) {
        // A stop asked of the dead worker's run still holds: it ends instead of running on.
        if (row.stop_requested) {
          const status = row.stop_requested === "cancel" ? "cancelled" : "interrupted";
          await this.#endPending(client, row.run_id, status);
          continue;
        }
        await client.query(
          `UPDATE tenxgraph_runs SET status = 'pending', updated_at = now() WHERE run_id = $1`,
          [row.run_id],
        );
        await this.#appendInTransaction(client, row.run_id, null, [
          { type: "run_requeued", reason: "worker_lost", workerId: row.worker_id },
        ]);
        await this.#addJob(client, row.run_id, row.thread_id);
      }
      const freed = orphaned.rows.flatMap((r) => (r.run_id ? [r.run_id] : []));
      return [...rows.map((r) => r.run_id), ...freed];
    });
  }

  /**
   * Ends the attempt: a final status (with its `run_status` event, the stream's last), or back
   * to the queue for another worker. `false` when the attempt no longer holds the run.
   */
  async finishAttempt(ref: AttemptRef, outcome: AttemptOutcome): Promise<boolean> {
    return this.#transaction(async (client) => {
      const status = outcome.kind === "final" ? outcome.status : "pending";
      const error = outcome.kind === "final" ? (outcome.error ?? null) : null;
      const { rows } = await client.query<{ thread_id: string }>(
        `UPDATE tenxgraph_runs SET status = $4, error = $5, updated_at = now()
          WHERE run_id = $1 AND attempts = $2 AND worker_id = $3 AND status = 'running'
          RETURNING thread_id`,
        [ref.runId, ref.attempt, ref.workerId, status, error ? JSON.stringify(error) : null],
      );
      if (rows.length === 0) return false;
      if (outcome.kind === "requeue") {
        await this.#appendInTransaction(client, ref.runId, ref.attempt, [
          { type: "run_requeued", reason: outcome.reason, workerId: ref.workerId },
        ]);
        await this.#addJob(client, ref.runId, rows[0]!.thread_id);
      } else {
        await this.#appendInTransaction(client, ref.runId, ref.attempt, [
          {
            type: "run_status",
            status: outcome.status,
            ...(outcome.error ? { error: outcome.error } : {}),
          },
        ]);
      }
      return true;
    });
  }

  /**
   * Appends an attempt's events, numbered on from the run's last. `false` (nothing written)
   * when the attempt no longer holds the run.
   */
  async appendEvents(ref: AttemptRef, events: readonly RunEvent[]): Promise<boolean> {
    if (events.length === 0) return true;
    const { rows } = await this.pool.query<{ written: string }>(
      `WITH owner AS (
         UPDATE tenxgraph_runs SET last_event_seq = last_event_seq + $4
          WHERE run_id = $1 AND attempts = $2 AND worker_id = $3 AND status = 'running'
          RETURNING last_event_seq - $4 AS base),
       written AS (
         INSERT INTO tenxgraph_run_events (run_id, seq, attempt, event)
         SELECT $1, owner.base + e.ord, $2, e.event
           FROM owner, jsonb_array_elements($5::jsonb) WITH ORDINALITY AS e(event, ord)
         RETURNING 1)
       SELECT count(*) AS written, pg_notify('${RUN_EVENTS_CHANNEL}', $1) FROM written`,
      [ref.runId, ref.attempt, ref.workerId, events.length, JSON.stringify(events)],
    );
    return Number(rows[0]?.written ?? 0) > 0;
  }

  /** The run's events after `afterSeq`, in order. */
  async readEvents(runId: string, afterSeq: number, limit = 500): Promise<StoredRunEvent[]> {
    await this.setup();
    const { rows } = await this.pool.query<{ seq: string; event: RunEvent }>(
      `SELECT seq, event FROM tenxgraph_run_events
        WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [runId, afterSeq, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), event: r.event }));
  }

  /** A run that is not running (not started, or its worker died) ends at once, with its final event. */
  async #endPending(
    client: pg.PoolClient,
    runId: string,
    status: "interrupted" | "cancelled" = "interrupted",
  ): Promise<void> {
    await client.query(
      "UPDATE tenxgraph_runs SET status = $2, updated_at = now() WHERE run_id = $1",
      [runId, status],
    );
    await this.#appendInTransaction(client, runId, null, [{ type: "run_status", status }]);
  }

  async #askStop(client: pg.PoolClient, runId: string, reason: StopReason): Promise<void> {
    await client.query(
      `UPDATE tenxgraph_runs SET stop_requested = $2, updated_at = now()
        WHERE run_id = $1 AND stop_requested IS NULL`,
      [runId, reason],
    );
  }

  async #appendInTransaction(
    client: pg.PoolClient,
    runId: string,
    attempt: number | null,
    events: readonly RunEvent[],
  ): Promise<void> {
    await client.query(
      `WITH owner AS (
         UPDATE tenxgraph_runs SET last_event_seq = last_event_seq + $3
          WHERE run_id = $1 RETURNING last_event_seq - $3 AS base, attempts)
       INSERT INTO tenxgraph_run_events (run_id, seq, attempt, event)
       SELECT $1, owner.base + e.ord, coalesce($2, owner.attempts), e.event
         FROM owner, jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(event, ord)`,
      [runId, attempt, events.length, JSON.stringify(events)],
    );
    await client.query("SELECT pg_notify($1, $2)", [RUN_EVENTS_CHANNEL, runId]);
  }

  /**
   * The run's job, keyed by the run so it is queued once: a job still waiting is replaced, and
   * one locked by a worker that is handing the run back keeps running to its end beside it.
   * Due when the run was created, whenever it is queued: a thread's queue takes its jobs in
   * `run_at` order, so a run handed back (takeover, drain) keeps its place ahead of the runs
   * queued behind it instead of going to the back.
   */
  async #addJob(client: pg.PoolClient, runId: string, threadId: string): Promise<void> {
    await client.query(
      `SELECT graphile_worker.add_job($1, json_build_object('runId', $2::text),
         queue_name := $3, max_attempts := 1000, job_key := $4,
         run_at := (SELECT created_at FROM tenxgraph_runs WHERE run_id = $2))`,
      [RUN_TASK, runId, queueName(threadId), `tenxgraph_run:${runId}`],
    );
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

interface RunRow {
  run_id: string;
  thread_id: string;
  user_id: string | null;
  status: RunStatus;
  multitask_strategy: MultitaskStrategy;
  request: RunRequest;
  worker_id: string | null;
  attempts: number;
  base_version: string | null;
  stop_requested: StopReason | null;
  error: RunRecord["error"];
  created_at: Date;
  updated_at: Date;
}

function toRecord(row: RunRow): RunRecord {
  return {
    runId: row.run_id,
    threadId: row.thread_id,
    userId: row.user_id,
    status: row.status,
    multitaskStrategy: row.multitask_strategy,
    request: row.request,
    workerId: row.worker_id,
    attempts: row.attempts,
    baseVersion: row.base_version === null ? null : Number(row.base_version),
    stopRequested: row.stop_requested,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
