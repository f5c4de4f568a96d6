import type { Message } from "@tenxgraph/core";
import type {
  AttemptRef,
  CheckpointRead,
  CheckpointWrite,
  ClaimResult,
  LedgerClaim,
  LedgerEntry,
  MessagePage,
  StepCommit,
  StoreWrite,
  ThreadCheckpoint,
  ThreadFilter,
  ThreadSummary,
  VersionRange,
} from "@tenxgraph/core/storage";
import { BaseCheckpointer, StaleStateError } from "@tenxgraph/core/storage";
import { ThreadCache } from "./cache/thread-cache.js";
import { Database } from "./connection/database.js";
import { PgHistory } from "./history/pg-history.js";
import { PgLedger, missingThread } from "./ledger/pg-ledger.js";
import { toClaimResults } from "./ledger/step-ledger.js";
import { resolveOptions } from "./options.js";
import type { PgCheckpointerOptions, ResolvedSettings } from "./options.js";
import { toCheckpoint, toThreadSummary } from "./rows.js";
import type { CheckpointRow, ThreadRow } from "./rows.js";
import { migrate } from "./schema/setup.js";
import { refusedWriteOr, writeStep, writtenCheckpoint } from "./step-write.js";
import { copyThread } from "./thread-copy.js";
import { deleteFamily } from "./thread-delete.js";

/**
 * Each read of the latest checkpoint also counts the thread's stop requests, at the cost of one
 * index probe: a run notes the count with the checkpoint it starts from (`getCheckpointAndStops`),
 * in the same round trip. Always one row: stop requests may exist before the thread does.
 */
const WITH_STOP_REQUESTS = `
  FROM (SELECT $1::text AS thread_id) asked
  LEFT JOIN stop_requests r ON r.thread_id = asked.thread_id`;

const SELECT_CHECKPOINT = `
  SELECT t.thread_id, t.parent_thread_id, t.incarnation_id, t.user_id, t.version, t.incarnation, t.message_count,
         t.updated_at, s.parent_version, s.node, s.run_id, s.status, s.record, r.count AS stop_requests
  ${WITH_STOP_REQUESTS}
  LEFT JOIN (threads t JOIN states s ON s.thread_id = t.thread_id AND s.version = t.version)
    ON t.thread_id = asked.thread_id`;

/** The row a cached copy is checked against (see `#current`). */
const SELECT_CURRENT = `
  SELECT t.version, t.incarnation, t.parent_thread_id, r.count AS stop_requests
  ${WITH_STOP_REQUESTS}
  LEFT JOIN threads t ON t.thread_id = asked.thread_id`;

/** Columns of a listing, most recently created or changed in status first (see `loadThreads`). */
const THREAD_LISTING = `
  SELECT thread_id, parent_thread_id, user_id, status, version, updated_at FROM threads`;

/** Threads without a parent, of user `$1` unless it is NULL (found through `threads_by_parent`). */
const SELECT_TOP_LEVEL_THREADS = `${THREAD_LISTING}
  WHERE parent_thread_id IS NULL AND ($1::text IS NULL OR user_id = $1)
  ORDER BY write_seq DESC LIMIT $2 OFFSET $3`;

/** The direct children of thread `$4`, listed like top-level threads. */
const SELECT_CHILD_THREADS = `${THREAD_LISTING}
  WHERE parent_thread_id = $4 AND ($1::text IS NULL OR user_id = $1)
  ORDER BY write_seq DESC LIMIT $2 OFFSET $3`;

/**
 * The store for many workers on many machines: PostgreSQL holds threads durably, with every
 * step a versioned compare-and-swap in one transaction (one round trip) and the tool ledger in
 * the same database; Redis, when configured, holds the hot copy of each thread's state, guarded
 * so it never moves backwards, and is never needed for correctness.
 *
 * @example
 * const checkpointer = new PgCheckpointer({
 *   postgresDsn: "postgres://app:secret@db:5432/app",
 *   redisUrl: "redis://cache:6379/0",
 * });
 * const app = graph.compile({ checkpointer });
 */
export class PgCheckpointer extends BaseCheckpointer {
  readonly #db: Database;
  readonly #cacheSettings: ResolvedSettings["cache"];
  /** Made by `setup()`, which reads the store id that names its keys; none without Redis. */
  #cache: ThreadCache | undefined;
  readonly #ledger: PgLedger;
  readonly #history: PgHistory;
  readonly #schema: string;

  /**
   * Only with Redis: keeps a step of a `durableCheckpointEveryStep: false` run there; `false`
   * (the run then writes the step durably) when Redis fails, the thread moved on, or Redis no
   * longer holds the checkpoint the step was made from. Without Redis the store has no cache,
   * and such runs write nothing between terminal points.
   */
  readonly cacheStep?: (write: CheckpointWrite) => Promise<boolean>;
  /**
   * Only with Redis: the last step cached for the thread, when PostgreSQL confirms it was made
   * on the thread's current incarnation (not on a deleted thread of the same id).
   */
  readonly getCachedStep?: (threadId: string) => Promise<CheckpointWrite | null>;

  constructor(options: PgCheckpointerOptions) {
    super(options);
    const settings = resolveOptions(options);
    this.#schema = settings.database.schema;
    this.#db = new Database(settings.database);
    this.#cacheSettings = settings.cache;
    this.#ledger = new PgLedger(this.#db);
    this.#history = new PgHistory(this.#db);
    if (settings.cache) {
      this.cacheStep = (write) =>
        this.run("cacheStep", async () => (await this.#cache?.putStep(write)) ?? false);
      this.getCachedStep = (threadId) =>
        this.run("getCachedStep", async () => {
          const cached = await this.#cache?.getStep(threadId);
          // Rare (a run in progress, or one that crashed), so the extra read is cheap: a step
          // of a deleted thread whose id was reused must not be laid over the new thread.
          if (!cached) return null;
          const { thread } = await this.#current(threadId);
          const sameLife =
            thread?.incarnation === cached.incarnation &&
            typeof cached.value.incarnation === "string";
          return sameLife ? cached.value : null;
        });
    }
  }

  /** Creates or migrates the schema, then opens the Redis cache; run again after a failure. */
  protected async open(): Promise<void> {
    const storeId = await migrate(this.#db, this.#schema);
    const settings = this.#cacheSettings;
    if (!settings || this.#cache || this.closed) return;
    // The store id, not the DSN, names the keys: two servers may each have a database of the
    // same name and share one Redis.
    const keyPrefix = settings.keyPrefix ?? `tenxgraph:${storeId}:`;
    this.#cache = new ThreadCache({ ...settings, keyPrefix });
  }

  /** Writes the completions still queued, then ends the pool and the Redis connection. */
  protected async shutdown(): Promise<void> {
    await this.#ledger.drain();
    await Promise.all([this.#db.end(), this.#cache?.close()]);
  }

  /**
   * With Redis, the state comes from the hot copy when PostgreSQL confirms it is current: same
   * version and same incarnation. A worker cut off from Redis may have committed newer versions
   * that the copy never saw, and a read that no write follows (a finished thread, `getState`)
   * would otherwise never notice; and a copy of a deleted thread may have outlived the delete in
   * Redis (the deleter could not reach it, or a late refresh landed after it), which must not
   * pass for a new thread of the same id at the same version.
   */
  protected async loadCheckpoint(threadId: string): Promise<ThreadCheckpoint | null> {
    return (await this.loadCheckpointAndStops(threadId)).checkpoint;
  }

  protected override async loadCheckpointAndStops(threadId: string): Promise<CheckpointRead> {
    if (this.#cache) {
      const [cached, current] = await Promise.all([
        this.#cache.getCheckpoint(threadId),
        this.#current(threadId),
      ]);
      const { thread, stopRequests } = current;
      if (thread === null) return { checkpoint: null, stopRequests };
      if (
        cached?.incarnation === thread.incarnation &&
        cached.value.version === thread.version &&
        // A copy cached by a release that did not know the life's id, or the version's place
        // in the history (parent, node, run), is read from PostgreSQL.
        typeof cached.value.incarnation === "string" &&
        cached.value.parentVersion !== undefined
      ) {
        // The parent comes from the row checked above, at no extra cost: a copy cached by a
        // release without the field, or by a later write that did not name it, reads the same.
        const checkpoint = { ...cached.value, parentThreadId: thread.parentThreadId };
        return { checkpoint, stopRequests };
      }
    }
    const [row] = await this.#db.query<Nullable<CheckpointRow> & StopRequestsColumn>(
      "getCheckpoint",
      "repeatable",
      SELECT_CHECKPOINT,
      [threadId],
    );
    const stopRequests = Number(row!.stop_requests ?? 0);
    if (row!.thread_id === null) return { checkpoint: null, stopRequests };
    const checkpoint = toCheckpoint(row as CheckpointRow);
    this.#cache?.refresh(checkpoint, Number(row!.incarnation));
    return { checkpoint, stopRequests };
  }

  /**
   * One statement (`tenxgraph_put_checkpoint`, migrations 7 and 9): the version compare, the
   * owner (a write never changes it: `ThreadOwnerError`), the riding completions, each fenced
   * by the completing update's own `WHERE` (`ClaimLostError`), the transcript change checked
   * against the parent's, then the checkpoint, messages, claims and (with `keepVersions`) the
   * pruning of old state rows, in one round trip and one transaction. A write without ledger writes sends two
   * empty lists. A child thread's first write also records its parent (see `writeStep`).
   */
  protected async commitCheckpoint(write: StoreWrite): Promise<StepCommit> {
    const { threadId, expectedVersion } = write;
    // Cut off mid-flight, the run fails clearly and `invoke(null)` continues the thread. A lost
    // claim (ClaimLostError) leaves the cache: the version matched, so it did not mislead.
    const result = await writeStep(this.#db, write, this.keepVersions).catch((error: unknown) => {
      throw refusedWriteOr(error, write);
    });
    if (result?.new_version == null) {
      // A conflict: whatever the cache holds for the thread may be what misled this run.
      await this.#cache?.forget(threadId);
      const found = result?.found_version == null ? null : Number(result.found_version);
      throw new StaleStateError(threadId, expectedVersion, found);
    }
    this.#cache?.refresh(writtenCheckpoint(write, result), Number(result.thread_incarnation));
    return {
      version: Number(result.new_version),
      claims: toClaimResults(write.ledger.claims, result.claims),
    };
  }

  protected async loadMessages(threadId: string, page: MessagePage): Promise<Message[]> {
    return this.#history.loadMessages(threadId, page);
  }

  protected async loadVersion(threadId: string, version: number): Promise<ThreadCheckpoint | null> {
    return this.#history.loadVersion(threadId, version);
  }

  protected async loadVersions(threadId: string, range: VersionRange): Promise<ThreadCheckpoint[]> {
    return this.#history.loadVersions(threadId, range);
  }

  /** Old state rows go, and the message rows only they held; the cached head stays valid. */
  protected async removeVersions(threadId: string, keepLast: number): Promise<number> {
    return this.#history.removeVersions(threadId, keepLast);
  }

  protected async saveDeleteAfter(threadId: string, at: string | null): Promise<boolean> {
    return this.#history.saveDeleteAfter(threadId, at);
  }

  protected async loadExpiredThreads(now: string): Promise<string[]> {
    return this.#history.loadExpiredThreads(now);
  }

  /**
   * Most recent first by `write_seq`, which a write moves only when it creates the thread or
   * changes its status: a step that keeps the status then updates no indexed column, and its
   * update of the thread row is HOT (migration 6).
   */
  protected async loadThreads(filter: ThreadFilter): Promise<ThreadSummary[]> {
    const { userId, parentThreadId, offset, limit } = filter;
    const rows = await this.#db.query<ThreadRow>(
      "listThreads",
      "repeatable",
      parentThreadId === null ? SELECT_TOP_LEVEL_THREADS : SELECT_CHILD_THREADS,
      [userId ?? null, limit, offset, ...(parentThreadId === null ? [] : [parentThreadId])],
    );
    return rows.map(toThreadSummary);
  }

  /**
   * Deletes the thread and its descendants in one transaction: each row, locked first, then
   * with it its states and messages, its ledger (`ON DELETE CASCADE`), and their stop requests,
   * which need no thread row; then their cache entries. Should an entry survive (Redis
   * unreachable, or a late refresh), it is never used again: a new thread of the same id gets a
   * new incarnation, and reads check it.
   */
  protected async removeThread(threadId: string): Promise<string[]> {
    const deleted = await deleteFamily(this.#db, threadId);
    await Promise.all([...new Set([threadId, ...deleted])].map((id) => this.#cache?.forget(id)));
    return deleted;
  }

  /**
   * Completions still queued first (a call whose result is only queued would read as in
   * doubt); the copy is a new life, so no cache entry of either thread can pass for it.
   */
  protected async copyStoredThread(from: string, to: string, incarnation: string) {
    await this.#ledger.drain();
    await copyThread(this.#db, from, to, incarnation);
    return (await this.loadCheckpoint(to))!;
  }

  /** Counted even before the thread's first write: a run counts requests before it writes. */
  protected async addStopRequest(threadId: string): Promise<void> {
    await this.#db.query(
      "requestStop",
      "once",
      `INSERT INTO stop_requests (thread_id, count) VALUES ($1, 1)
       ON CONFLICT (thread_id) DO UPDATE SET count = stop_requests.count + 1`,
      [threadId],
    );
  }

  protected async loadStopRequests(threadId: string): Promise<number> {
    const [row] = await this.#db.query<{ count: string }>(
      "countStopRequests",
      "repeatable",
      `SELECT count FROM stop_requests WHERE thread_id = $1`,
      [threadId],
    );
    return row ? Number(row.count) : 0;
  }

  protected async loadCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    return this.#ledger.getCalls(threadId, keys);
  }

  protected async insertClaims(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]> {
    return this.#ledger.claimCalls(threadId, claims).catch((error: unknown) => {
      throw isForeignKeyViolation(error) ? missingThread(threadId, error) : error;
    });
  }

  protected async recordCompletion(
    threadId: string,
    attempt: AttemptRef,
    result: unknown,
  ): Promise<boolean> {
    return this.#ledger.completeCall(threadId, attempt, result);
  }

  protected async recordRelease(threadId: string, attempt: AttemptRef): Promise<boolean> {
    return this.#ledger.releaseCall(threadId, attempt);
  }

  protected async renewClaims(
    threadId: string,
    attempts: AttemptRef[],
    leaseMs: number,
  ): Promise<AttemptRef[]> {
    return this.#ledger.heartbeatCalls(threadId, attempts, leaseMs);
  }

  protected async loadAllCalls(threadId: string): Promise<LedgerEntry[]> {
    return this.#ledger.listCalls(threadId);
  }

  /**
   * The thread's version and incarnation in PostgreSQL, which a cached copy must match, and its
   * parent, which the row holds and a cached copy read back takes from it (see `loadCheckpoint`).
   */
  async #current(
    threadId: string,
  ): Promise<{ thread: CurrentThread | null; stopRequests: number }> {
    const [row] = await this.#db.query<
      Nullable<{ version: string; incarnation: string; parent_thread_id: string }> &
        StopRequestsColumn
    >("getCheckpoint", "repeatable", SELECT_CURRENT, [threadId]);
    const stopRequests = Number(row!.stop_requests ?? 0);
    if (row!.version === null) return { thread: null, stopRequests };
    // bigint arrives as a string; versions and incarnations stay far below 2^53.
    const { version, incarnation, parent_thread_id: parentThreadId } = row!;
    const thread = { version: Number(version), incarnation: Number(incarnation), parentThreadId };
    return { thread, stopRequests };
  }
}

/** A row of a left join: every column may be `null`. */
type Nullable<Row> = { [Column in keyof Row]: Row[Column] | null };

/** The stop-request count each read of the latest checkpoint carries (`null`: none). */
interface StopRequestsColumn {
  stop_requests: string | null;
}

/** What `threads` holds of a thread that a cached copy is checked against and completed by. */
interface CurrentThread {
  version: number;
  incarnation: number;
  parentThreadId: string | null;
}

function isForeignKeyViolation(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code === "23503" || (error as { code?: string }).code === "23503";
}
