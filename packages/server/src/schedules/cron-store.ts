import { applyMigrationSteps, hostDatabaseError, withMigrationLock } from "@tenxgraph/postgres";
import type pg from "pg";
import { RunDb } from "../background/run-db.js";
import { CRON_MIGRATIONS, CRON_SCHEMA_LOCK, CRON_SCHEMA_TABLE } from "./cron-schema.js";
import { latestTick, nextTick } from "./cron-time.js";

/**
 * The API a schedule was made through, which is the shape of its payload: `v1` (`POST
 * /v1/crons`, a `POST T/runs` body) or `langgraph` (LangGraph's crons routes, a `RunCreate`).
 */
export type CronWire = "v1" | "langgraph";

/** A schedule as stored: who owns it, when it ticks, and the run body each tick queues. */
export interface CronRecord {
  cronId: string;
  wire: CronWire;
  userId: string | null;
  schedule: string;
  timezone: string;
  /** The thread every tick runs on; `null`: a fresh thread per tick. */
  threadId: string | null;
  /** The body of `POST T/runs` each tick queues (messages, config, multitask_strategy…). */
  payload: Record<string, unknown>;
  nextTickAt: string;
  createdAt: string;
  updatedAt: string;
}

/** A tick this scheduler won: its run is to be queued under `runId` on `threadId`. */
export interface ClaimedTick {
  cron: CronRecord;
  tickAt: Date;
  runId: string;
  threadId: string;
}

interface CronRow {
  cron_id: string;
  wire: CronWire;
  user_id: string | null;
  schedule: string;
  timezone: string;
  thread_id: string | null;
  payload: Record<string, unknown>;
  next_tick_at: Date;
  created_at: Date;
  updated_at: Date;
}

const CRON_COLUMNS = `cron_id, wire, user_id, schedule, timezone, thread_id, payload, next_tick_at,
  created_at, updated_at`;

/** Schedules on the runs' PostgreSQL: their rows, and one row per tick started. */
export class CronStore {
  readonly #pool: pg.Pool;
  readonly #db: RunDb;
  #ready: Promise<void> | null = null;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
    this.#db = new RunDb({ pool });
  }

  /** Creates or migrates the tables. Idempotent, safe from many processes at once. */
  setup(): Promise<void> {
    this.#ready ??= withMigrationLock(this.#pool, CRON_SCHEMA_LOCK, (client) =>
      applyMigrationSteps(client, CRON_SCHEMA_TABLE, CRON_MIGRATIONS),
    ).catch((error: unknown) => {
      this.#ready = null;
      throw hostDatabaseError("setup", this.#pool, error);
    });
    return this.#ready;
  }

  async create(cron: Omit<CronRecord, "nextTickAt" | "createdAt" | "updatedAt">) {
    const next = nextTick(cron.schedule, cron.timezone, new Date());
    const [row] = await this.#query(
      "createCron",
      `INSERT INTO tenxgraph_crons
              (cron_id, wire, user_id, schedule, timezone, thread_id, payload, next_tick_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${CRON_COLUMNS}`,
      [
        cron.cronId,
        cron.wire,
        cron.userId,
        cron.schedule,
        cron.timezone,
        cron.threadId,
        cron.payload,
        next,
      ],
    );
    return toRecord(row!);
  }

  /** Changes the schedule's timing and payload; its next tick follows the new timing. */
  async update(cronId: string, change: Pick<CronRecord, "schedule" | "timezone" | "payload">) {
    const next = nextTick(change.schedule, change.timezone, new Date());
    const [row] = await this.#query(
      "updateCron",
      `UPDATE tenxgraph_crons SET schedule = $2, timezone = $3, payload = $4, next_tick_at = $5,
              updated_at = now() WHERE cron_id = $1 RETURNING ${CRON_COLUMNS}`,
      [cronId, change.schedule, change.timezone, change.payload, next],
    );
    return row ? toRecord(row) : null;
  }

  /**
   * The user's schedules of one wire (every user's, `userId` null) whose payload contains
   * `payload` (jsonb `@>`) and, when given, on `threadId`: in `order`, or their count.
   */
  async search(filter: CronFilter, page: CronPage): Promise<CronRecord[]> {
    const rows = await this.#query(
      "searchCrons",
      `SELECT ${CRON_COLUMNS} FROM tenxgraph_crons WHERE ${FILTER}
        ORDER BY ${page.orderBy} ${page.descending ? "DESC" : "ASC"}, cron_id LIMIT $5 OFFSET $6`,
      [...filterValues(filter), page.limit, page.offset],
    );
    return rows.map(toRecord);
  }

  async count(filter: CronFilter): Promise<number> {
    const [row] = await this.#query<{ n: number }>(
      "countCrons",
      `SELECT count(*)::int AS n FROM tenxgraph_crons WHERE ${FILTER}`,
      filterValues(filter),
    );
    return row!.n;
  }

  async get(cronId: string): Promise<CronRecord | null> {
    const [row] = await this.#query(
      "getCron",
      `SELECT ${CRON_COLUMNS} FROM tenxgraph_crons WHERE cron_id = $1`,
      [cronId],
    );
    return row ? toRecord(row) : null;
  }

  /** The user's schedules (every one without auth, `userId` null), newest first. */
  async list(userId: string | null, page: { limit: number; offset: number }) {
    const rows = await this.#query(
      "listCrons",
      `SELECT ${CRON_COLUMNS} FROM tenxgraph_crons WHERE $1::text IS NULL OR user_id = $1
        ORDER BY created_at DESC, cron_id DESC LIMIT $2 OFFSET $3`,
      [userId, page.limit, page.offset],
    );
    return rows.map(toRecord);
  }

  /** Deletes the schedule and its ticks (runs already queued stay). `false` if it was gone. */
  async delete(cronId: string): Promise<boolean> {
    const rows = await this.#query(
      "deleteCron",
      `DELETE FROM tenxgraph_crons WHERE cron_id = $1 RETURNING ${CRON_COLUMNS}`,
      [cronId],
    );
    return rows.length > 0;
  }

  /**
   * Claims the ticks due now, one per schedule however many were missed (a scheduler down for
   * N ticks owes one run, for the latest), and moves each schedule to its next tick after now.
   * The schedule rows are locked `SKIP LOCKED` and each tick's key is unique, so two schedulers
   * never both claim a tick. `newId` names each claimed tick's run (and fresh thread).
   */
  async claimDue(newId: () => string, limit = 20): Promise<ClaimedTick[]> {
    await this.setup();
    return this.#db.transaction("claimDueTicks", async (client) => {
      const { rows } = await client.query<CronRow>(
        `SELECT ${CRON_COLUMNS} FROM tenxgraph_crons WHERE next_tick_at <= now()
          ORDER BY next_tick_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      const claimed: ClaimedTick[] = [];
      const { rows: clock } = await client.query<{ now: Date }>("SELECT now() AS now");
      const now = clock[0]!.now;
      for (const row of rows) {
        const tickAt = latestTick(row.schedule, row.timezone, now);
        const runId = newId();
        const threadId = row.thread_id ?? newId();
        const won = await client.query(
          `INSERT INTO tenxgraph_cron_ticks (cron_id, tick_at, run_id, thread_id)
           VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1`,
          [row.cron_id, tickAt, runId, threadId],
        );
        await client.query(
          "UPDATE tenxgraph_crons SET next_tick_at = $2, updated_at = now() WHERE cron_id = $1",
          [row.cron_id, nextTick(row.schedule, row.timezone, now)],
        );
        if (won.rowCount) claimed.push({ cron: toRecord(row), tickAt, runId, threadId });
      }
      return claimed;
    });
  }

  /**
   * Ticks claimed more than `olderThanMs` ago whose run was never queued (their scheduler died
   * in between): queued again under the same run id, so a run is never queued twice.
   */
  async unqueuedTicks(olderThanMs: number): Promise<ClaimedTick[]> {
    await this.setup();
    const rows = await this.#query<CronRow & { tick_at: Date; run_id: string; tid: string }>(
      "unqueuedTicks",
      `SELECT c.cron_id, c.wire, c.user_id, c.schedule, c.timezone, c.thread_id, c.payload,
              c.next_tick_at, c.created_at, c.updated_at,
              t.tick_at, t.run_id, t.thread_id AS tid
         FROM tenxgraph_cron_ticks t JOIN tenxgraph_crons c USING (cron_id)
        WHERE t.queued_at IS NULL AND t.error IS NULL
          AND t.created_at < now() - make_interval(secs => $1 / 1000.0)
        LIMIT 20`,
      [olderThanMs],
    );
    return rows.map((r) => ({
      cron: toRecord(r),
      tickAt: r.tick_at,
      runId: r.run_id,
      threadId: r.tid,
    }));
  }

  /** Records what became of a claimed tick: its run queued, or why it was not. */
  async recordTick(tick: ClaimedTick, error: { code: string; message: string } | null) {
    await this.#query(
      "recordTick",
      `UPDATE tenxgraph_cron_ticks SET queued_at = CASE WHEN $3::jsonb IS NULL THEN now() END,
              error = $3 WHERE cron_id = $1 AND tick_at = $2`,
      [tick.cron.cronId, tick.tickAt, error && JSON.stringify(error)],
    );
  }

  /** The schedule's latest ticks, newest first. */
  async ticks(cronId: string, limit = 20) {
    return this.#query<{
      tick_at: Date;
      run_id: string;
      thread_id: string;
      queued_at: Date | null;
      error: { code: string; message: string } | null;
    }>(
      "cronTicks",
      `SELECT tick_at, run_id, thread_id, queued_at, error FROM tenxgraph_cron_ticks
        WHERE cron_id = $1 ORDER BY tick_at DESC LIMIT $2`,
      [cronId, limit],
    );
  }

  async #query<Row extends pg.QueryResultRow = CronRow>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<Row[]> {
    await this.setup();
    return this.#db.query<Row>(operation, text, values);
  }
}

/** The store of the schedules on `pool`, one per pool: its schema is set up once per process. */
export function cronStore(pool: pg.Pool): CronStore {
  let store = stores.get(pool);
  if (!store) stores.set(pool, (store = new CronStore(pool)));
  return store;
}
const stores = new WeakMap<pg.Pool, CronStore>();

/** Which schedules {@link CronStore.search} reads. */
export interface CronFilter {
  wire: CronWire;
  userId: string | null;
  threadId?: string;
  payload: Record<string, unknown>;
}

/** A page of {@link CronStore.search}: `orderBy` is a column, never the caller's text. */
export interface CronPage {
  orderBy:
    | "cron_id"
    | "thread_id"
    | "created_at"
    | "updated_at"
    | "next_tick_at"
    | "payload->>'assistant_id'";
  descending: boolean;
  limit: number;
  offset: number;
}

const FILTER = `wire = $1 AND ($2::text IS NULL OR user_id = $2)
  AND ($3::text IS NULL OR thread_id = $3) AND payload @> $4::jsonb`;

function filterValues(filter: CronFilter): unknown[] {
  return [filter.wire, filter.userId, filter.threadId ?? null, JSON.stringify(filter.payload)];
}

function toRecord(row: CronRow): CronRecord {
  return {
    cronId: row.cron_id,
    wire: row.wire,
    userId: row.user_id,
    schedule: row.schedule,
    timezone: row.timezone,
    threadId: row.thread_id,
    payload: row.payload,
    nextTickAt: row.next_tick_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
