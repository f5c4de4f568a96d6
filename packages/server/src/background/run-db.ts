import { createHash } from "node:crypto";
import { createHostPool, hostDatabaseError } from "@tenxgraph/postgres";
import type pg from "pg";
import { OWE_DELIVERIES } from "../webhooks/webhook-schema.js";
import type {
  MultitaskStrategy,
  BackgroundRunEvent,
  RunRecord,
  RunRequest,
  BackgroundRunStatus,
  StopReason,
} from "./run-record.js";

/** The graphile-worker task that runs one background run; its payload is `{ runId }`. */
export const RUN_TASK = "tenxgraph_run";
/** The channel a worker notifies when it appends events to a run. */
export const RUN_EVENTS_CHANNEL = "tenxgraph_run_events";

/** Where background runs live: a pool of its own, or one the host shares. */
export type RunDbOptions = { postgresDsn: string; maxConnections?: number } | { pool: pg.Pool };

/**
 * The runs' PostgreSQL connection, on `@tenxgraph/postgres`'s host pool: every failure comes
 * out as a coded tenxgraph error (`STORAGE_FAILURE_001`) naming the operation and the database.
 */
export class RunDb {
  readonly pool: pg.Pool;

  constructor(options: RunDbOptions) {
    this.pool =
      "pool" in options
        ? options.pool
        : // A host cut off from PostgreSQL must find out, not hang: its heartbeat fails, and
          // the worker gives its runs up before another worker takes them.
          createHostPool({ postgresDsn: options.postgresDsn, max: options.maxConnections ?? 10 });
  }

  /** One statement's rows; the statement is prepared once per connection. */
  async query<Row extends pg.QueryResultRow>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<Row[]> {
    try {
      return (await this.pool.query<Row>({ name: statementName(text), text, values })).rows;
    } catch (error) {
      throw hostDatabaseError(operation, this.pool, error);
    }
  }

  /** {@link updateRun} on the pool: the row and its events in one statement. */
  async update(
    operation: string,
    change: RunChange,
    values: [runId: string, ...rest: unknown[]],
    events: readonly BackgroundRunEvent[],
  ): Promise<RunRow | null> {
    try {
      return await updateRun(this.pool, change, values, events);
    } catch (error) {
      throw hostDatabaseError(operation, this.pool, error);
    }
  }

  /** `work` in one transaction: committed when it returns, rolled back when it throws. */
  async transaction<T>(operation: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw hostDatabaseError(operation, this.pool, error);
    }
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw hostDatabaseError(operation, this.pool, error);
    } finally {
      client.release();
    }
  }
}

/**
 * A thread's runs run one at a time, in order, which is "one active run per thread" for
 * `enqueue` (and keeps a taken-over run ahead of the runs queued behind it). A run posted to a
 * thread with no active run (the common case) gets a job outside any queue: graphile-worker's
 * job pick-up locks every queue row it could take from, so a queue per waiting thread cost
 * every pick-up one lock per thread with a run waiting (a WAL record each). A run posted while
 * another is active waits in its thread's graphile-worker queue, named this and the thread,
 * which runs its jobs one at a time in `run_at` order. While the thread's first run (`queued`
 * false) is active, the queue is held for it: locked by {@link QUEUE_HOLD_PREFIX} and its id (a
 * trigger of run-schema.ts locks it when a run joins the queue, and another unlocks it when the
 * first run ends or is deleted, whatever ends it).
 */
export const QUEUE_PREFIX = "tenxgraph:thread:";

/**
 * The name of the queue of the thread `threadId` (SQL text), in SQL. graphile-worker's queue
 * names fit in 128 characters and thread ids in 256, so a longer id is named by its digest,
 * marked by a `#` (and so is an id that starts with one, so that no id passes for another's
 * digest). The triggers of run-schema.ts hold this SQL as it was when their migration step
 * ran: a change of the naming needs a new step that recreates them, or they hold and release
 * queues by the old names.
 */
export function threadQueueName(threadId: string): string {
  const fits = 128 - QUEUE_PREFIX.length;
  return `('${QUEUE_PREFIX}' || CASE WHEN length(${threadId}) <= ${fits}
    AND NOT starts_with(${threadId}, '#') THEN ${threadId} ELSE '#' || md5(${threadId}) END)`;
}

/** The `locked_by` of a thread's queue held for the run named after it (see {@link QUEUE_PREFIX}). */
export const QUEUE_HOLD_PREFIX = "tenxgraph:run:";

/**
 * The advisory lock (a key, in SQL) between queueing a run's job and collecting the threads'
 * idle queues (`collectIdleQueues`): every job is queued holding it shared, and a collection
 * runs only while no one holds it. graphile-worker's `add_job` makes the queue row in one
 * statement and points the job at it in the next; a queue deleted between the two would leave
 * the job outside its thread's queue, free to run beside the thread's other runs.
 */
export const QUEUE_COLLECTION_LOCK = "hashtextextended('tenxgraph_runs:queue_collection', 0)";

/**
 * Queues the run's job again (its job's key is the run's, so a job still waiting is replaced,
 * and one locked by a worker that is handing the run back keeps running to its end beside it),
 * in its thread's queue if it was queued there. Nothing is queued for a run that is gone.
 */
export async function addJob(client: pg.PoolClient, runId: string): Promise<void> {
  await client.query(`SELECT ${addJobCall("r")} FROM tenxgraph_runs AS r WHERE r.run_id = $1`, [
    runId,
  ]);
}

/**
 * A run job's payload: the run, and its thread, so that the worker needs no read of the run to
 * know which thread to look at before it takes the run (jobs queued by older versions carry
 * only `runId`: the worker reads the run for them).
 */
export interface RunJobPayload {
  runId: string;
  threadId?: string;
}

/**
 * The SQL call that queues the job of the run `run` (the SQL name of a `tenxgraph_runs` row),
 * for a statement that queues a run's job with other work. The job is in the thread's queue
 * when the run is `queued`, and due when the run was created, whenever it is queued: a
 * thread's queue takes its jobs in `run_at` order, so a run handed back (takeover, drain) keeps
 * its place ahead of the runs queued behind it instead of going to the back.
 */
export function addJobCall(run: string, flags = "NULL"): string {
  // The lock is taken in a subquery the call reads from, so it is held before add_job starts.
  return `(SELECT graphile_worker.add_job('${RUN_TASK}',
    json_build_object('runId', ${run}.run_id, 'threadId', ${run}.thread_id),
    queue_name := CASE WHEN ${run}.queued THEN ${threadQueueName(`${run}.thread_id`)} END,
    max_attempts := 1000, job_key := 'tenxgraph_run:' || ${run}.run_id,
    run_at := ${run}.created_at, flags := ${flags}::text[])
    FROM (SELECT pg_advisory_xact_lock_shared(${QUEUE_COLLECTION_LOCK})) AS queue_collection_lock)`;
}

/**
 * Queues the run's job again, flagged `flag` as well as with the flags it had: the worker that
 * declined it (it cannot continue the thread, see `RunWorker`) skips jobs with its flag
 * (graphile-worker's `forbiddenFlags`), so another version's worker takes it. Due when the run
 * was created, as always: it keeps its place in the thread's queue. No attempt is counted.
 */
export async function declineJob(client: Queryable, runId: string, flag: string): Promise<void> {
  const flags = `ARRAY(SELECT jsonb_object_keys(coalesce((SELECT flags FROM graphile_worker._private_jobs
      WHERE key = 'tenxgraph_run:' || $1), '{}'::jsonb)) UNION SELECT $2::text)`;
  // Only a run still pending goes back: the worker decides before it reads the run, and a run
  // that ended, or that another worker holds (a duplicate job), must not be queued again.
  await client.query(
    `SELECT ${addJobCall("r", flags)}
       FROM tenxgraph_runs AS r WHERE r.run_id = $1 AND r.status = 'pending'`,
    [runId, flag],
  );
}

/** A run that is not running (not started, or its worker died) ends at once, with its final event. */
export async function endPending(
  client: Queryable,
  runId: string,
  status: "interrupted" | "cancelled" = "interrupted",
): Promise<void> {
  await updateRun(
    client,
    { set: "status = $3, updated_at = now()" },
    [runId, status],
    [{ type: "run_status", status }],
  );
}

/** Asks the run's worker to stop it (seen at its next heartbeat); a first ask is kept. */
export async function askStop(
  client: pg.PoolClient,
  runId: string,
  reason: StopReason,
): Promise<void> {
  await client.query(
    `UPDATE tenxgraph_runs SET stop_requested = $2, updated_at = now()
      WHERE run_id = $1 AND stop_requested IS NULL`,
    [runId, reason],
  );
}

/** What {@link updateRun} changes in a run's row, and whether it wakes an idle worker. */
export interface RunChange {
  set?: string;
  where?: string;
  /** Wake an idle worker when another job is ready (see {@link WAKE_IDLE_WORKER}). */
  wakeWorker?: boolean;
}

/**
 * Wakes idle workers (graphile-worker's `jobs:insert`: each worker process looks for a job at
 * once) when a job that another worker could take is ready. A worker whose look found nothing
 * sleeps until its next poll (500 ms), and with a queue per thread a look finds nothing while
 * another worker's look holds the queues' locks: so a worker that takes a run passes the word
 * on, and the queue is not left to the poll.
 */
const WAKE_IDLE_WORKER = `(SELECT pg_notify('jobs:insert', '{"count":1}')
   WHERE EXISTS (
     SELECT 1 FROM graphile_worker._private_jobs AS j
      WHERE j.is_available AND j.run_at <= now()
        AND (j.job_queue_id IS NULL OR j.job_queue_id IN (
              SELECT q.id FROM graphile_worker._private_job_queues AS q WHERE q.is_available))))
   AS woke`;

/**
 * A name for a statement sent often, so each connection parses and plans it once (a prepared
 * statement) instead of at every call.
 */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `tenxgraph_runs_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}
const statementNames = new Map<string, string>();

/** A pool or a client in a transaction: what the run statements are sent on. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

/**
 * One statement that updates a run's row (`SET set WHERE run_id = $1 AND where`; `$2` is the
 * events' JSON array, the other values start at `$3`) and appends `events` after the run's last
 * one, as events of the attempt the row holds after the update, owes the webhook deliveries
 * they announce, then wakes the run's readers: the row, its events and their deliveries commit
 * together, in one round trip. `where` fences the write: nothing
 * is written when it matches no row. A `run_attempt` event gets the new attempt's number.
 * Returns the row as updated, or null.
 */
export async function updateRun(
  db: Queryable,
  change: RunChange,
  values: [runId: string, ...rest: unknown[]],
  events: readonly BackgroundRunEvent[],
): Promise<RunRow | null> {
  const [runId, ...rest] = values;
  const text = `WITH run AS (
       UPDATE tenxgraph_runs SET last_event_seq = last_event_seq + jsonb_array_length($2::jsonb)
              ${change.set ? `, ${change.set}` : ""}
        WHERE run_id = $1 ${change.where ? `AND ${change.where}` : ""}
        RETURNING ${RUN_COLUMNS}, last_event_seq),
     written AS (
       INSERT INTO tenxgraph_run_events (run_id, seq, attempt, event)
       SELECT run.run_id, run.last_event_seq - jsonb_array_length($2::jsonb) + e.ord,
              run.attempts,
              CASE WHEN e.event->>'type' = 'run_attempt'
                   THEN e.event || jsonb_build_object('attempt', run.attempts) ELSE e.event END
         FROM run, jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(event, ord)),
     ${OWE_DELIVERIES}
     SELECT run.*, pg_notify('${RUN_EVENTS_CHANNEL}', run.run_id)
            ${change.wakeWorker ? `, ${WAKE_IDLE_WORKER}` : ""}
       FROM run`;
  const { rows } = await db.query<RunRow>({
    name: statementName(text),
    text,
    values: [runId, JSON.stringify(events), ...rest],
  });
  return rows[0] ?? null;
}

/**
 * The columns of a {@link RunRow}, named: a prepared statement that returns `*` fails once a
 * newer version adds a column (a rolling deploy), so none does.
 */
export const RUN_COLUMNS = `run_id, thread_id, user_id, status, multitask_strategy, request, worker_id,
  attempts, base_version, stop_requested, error, created_at, updated_at`;

/** A row of `tenxgraph_runs`. */
export interface RunRow {
  run_id: string;
  thread_id: string;
  user_id: string | null;
  status: BackgroundRunStatus;
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

export function toRecord(row: RunRow): RunRecord {
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
