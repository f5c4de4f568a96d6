import { createHostPool, hostDatabaseError } from "@tenxgraph/postgres";
import type pg from "pg";
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

  /** One statement's rows. */
  async query<Row extends pg.QueryResultRow>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<Row[]> {
    try {
      return (await this.pool.query<Row>(text, values)).rows;
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
 * Runs of one thread share a graphile-worker queue: the queue runs its jobs one at a time, in
 * order, which is "one active run per thread" for `enqueue` (and keeps a taken-over run ahead
 * of the runs queued behind it).
 */
function queueName(threadId: string): string {
  return `tenxgraph:thread:${threadId}`;
}

/**
 * The run's job, keyed by the run so it is queued once: a job still waiting is replaced, and
 * one locked by a worker that is handing the run back keeps running to its end beside it.
 * Due when the run was created, whenever it is queued: a thread's queue takes its jobs in
 * `run_at` order, so a run handed back (takeover, drain) keeps its place ahead of the runs
 * queued behind it instead of going to the back.
 */
export async function addJob(
  client: pg.PoolClient,
  runId: string,
  threadId: string,
): Promise<void> {
  await client.query(
    `SELECT graphile_worker.add_job($1, json_build_object('runId', $2::text),
       queue_name := $3, max_attempts := 1000, job_key := $4,
       run_at := (SELECT created_at FROM tenxgraph_runs WHERE run_id = $2))`,
    [RUN_TASK, runId, queueName(threadId), `tenxgraph_run:${runId}`],
  );
}

/** A run that is not running (not started, or its worker died) ends at once, with its final event. */
export async function endPending(
  client: pg.PoolClient,
  runId: string,
  status: "interrupted" | "cancelled" = "interrupted",
): Promise<void> {
  await client.query(
    "UPDATE tenxgraph_runs SET status = $2, updated_at = now() WHERE run_id = $1",
    [runId, status],
  );
  await appendInTransaction(client, runId, null, [{ type: "run_status", status }]);
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

/** Appends events numbered on from the run's last (of `attempt`, or its current one), and wakes readers. */
export async function appendInTransaction(
  client: pg.PoolClient,
  runId: string,
  attempt: number | null,
  events: readonly BackgroundRunEvent[],
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
