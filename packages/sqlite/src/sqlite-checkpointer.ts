import type { Message } from "@tenxgraph/core";
import type {
  AttemptRef,
  ClaimResult,
  HistoryOptions,
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
import { BaseCheckpointer } from "@tenxgraph/core/storage";
import type Database from "better-sqlite3";
import { commitWrite, encodeWrite } from "./commit-write.js";
import { copyThread } from "./copy-thread.js";
import type { EncodedWrite } from "./commit-write.js";
import { SqliteLedger } from "./ledger.js";
import { mapSqliteError } from "./map-error.js";
import { openDatabase } from "./open-database.js";
import type { ConnectionSettings } from "./open-database.js";
import { pruneVersions } from "./prune-versions.js";
import { readMessages } from "./read-messages.js";
import { toCheckpoint, toThreadSummary } from "./rows.js";
import type { CheckpointRow, ThreadRow } from "./rows.js";
import { prepareStatements } from "./sql.js";
import type { Statements } from "./sql.js";
import { WrittenHeads } from "./written-heads.js";
import type { WrittenHead } from "./written-heads.js";

/** Options of {@link SqliteCheckpointer}. */
export interface SqliteCheckpointerOptions extends HistoryOptions {
  /** The database file, created with its folder if missing. Default `./.tenxgraph/threads.db`. */
  path?: string;
  /**
   * `"FULL"` (default): a committed step survives power loss. `"NORMAL"`: commits skip one
   * fsync, so they are faster, and a power cut (not a process crash) may lose the last steps;
   * the ledger then no longer proves a call ran, and it may run again.
   */
  synchronous?: "FULL" | "NORMAL";
  /** How long a write waits for another process's write lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
}

/** The default database file of examples and the CLI, relative to the working directory. */
export const DEFAULT_SQLITE_PATH = "./.tenxgraph/threads.db";

interface Connection {
  db: Database.Database;
  sql: Statements;
  ledger: SqliteLedger;
  /** The heads this connection committed, so a thread's next write need not read them back. */
  heads: WrittenHeads;
  /** The transaction of `putCheckpoint` and `commitStep`, made once per connection. */
  commitWrite: Database.Transaction<
    (
      write: StoreWrite,
      encoded: EncodedWrite,
      head: WrittenHead | undefined,
    ) => { commit: StepCommit; head: WrittenHead }
  >;
  /** `listMessages`'s read transaction: the transcript and its rows from one snapshot. */
  readMessages: Database.Transaction<(threadId: string, page: MessagePage) => Message[]>;
  /** `pruneVersions`'s transaction. */
  pruneVersions: Database.Transaction<(threadId: string, keepLast: number) => number>;
  /** `copyThread`'s transaction. */
  copyThread: Database.Transaction<
    (from: string, to: string, incarnation: string) => ThreadCheckpoint
  >;
  /** `deleteThread`'s transaction; returns the ids it deleted. */
  deleteThread: Database.Transaction<(threadId: string) => string[]>;
}

/**
 * The embedded default store: one SQLite file (WAL mode) that several processes on one machine
 * may share. Every write is a versioned compare-and-swap in one `BEGIN IMMEDIATE` transaction,
 * and the tool ledger lives in the same file, so a process killed at any point resumes without
 * repeating a recorded call. Opens the file on `setup()` or first use.
 *
 * @example
 * const app = graph.compile({ checkpointer: new SqliteCheckpointer({ path: "./.tenxgraph/threads.db" }) });
 * await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t1" });
 */
export class SqliteCheckpointer extends BaseCheckpointer {
  readonly #settings: Readonly<ConnectionSettings>;
  #connection: Connection | undefined;

  constructor(options: SqliteCheckpointerOptions = {}) {
    super(options);
    this.#settings = Object.freeze(checkOptions(options));
  }

  /** The database file this checkpointer uses. */
  get path(): string {
    return this.#settings.path;
  }

  /** Opens (creating or migrating) the file. */
  protected async open(): Promise<void> {
    this.#connection ??= this.#connect();
  }

  /** Writes the completions still queued, then closes the file. */
  protected async shutdown(): Promise<void> {
    this.#connection?.ledger.flushCompletions();
    this.#connection?.db.close();
    this.#connection = undefined;
  }

  /** Engine failures become tenxgraph errors that say what went wrong with the file. */
  protected override mapError(operation: string, error: unknown): unknown {
    return mapSqliteError(operation, this.#settings.path, error);
  }

  protected async loadCheckpoint(threadId: string): Promise<ThreadCheckpoint | null> {
    return this.#use(({ sql }) => {
      const row = sql.selectCheckpoint.get(threadId) as CheckpointRow | undefined;
      return row ? toCheckpoint(row) : null;
    });
  }

  protected async commitCheckpoint(write: StoreWrite): Promise<StepCommit> {
    return this.#use(({ commitWrite, heads }) => {
      // Encoded before the transaction: a value JSON cannot hold fails without touching the file.
      const encoded = encodeWrite(write);
      // State, messages and ledger writes commit in one transaction, so a crash cannot keep one
      // and lose another; the write lock is taken before the version is read, so the compare
      // and the fences are exact.
      try {
        const { commit, head } = commitWrite.immediate(write, encoded, heads.continued(write));
        heads.remember(write.threadId, head);
        return commit;
      } catch (error) {
        heads.forget(write.threadId); // most often stale: the thread moved on
        throw error;
      }
    });
  }

  protected async loadMessages(threadId: string, page: MessagePage): Promise<Message[]> {
    return this.#use(({ readMessages }) => readMessages.deferred(threadId, page));
  }

  protected async loadVersion(threadId: string, version: number): Promise<ThreadCheckpoint | null> {
    return this.#use(({ sql }) => {
      const row = sql.selectStateVersion.get(threadId, version) as CheckpointRow | undefined;
      return row ? toCheckpoint(row) : null;
    });
  }

  protected async loadVersions(
    threadId: string,
    { limit, before }: VersionRange,
  ): Promise<ThreadCheckpoint[]> {
    return this.#use(({ sql }) => {
      // SQLite's LIMIT takes -1 for no limit.
      const page = { threadId, before, limit: limit ?? -1 };
      return (sql.selectStateVersions.all(page) as CheckpointRow[]).map(toCheckpoint);
    });
  }

  protected async removeVersions(threadId: string, keepLast: number): Promise<number> {
    return this.#use(({ pruneVersions }) => pruneVersions.immediate(threadId, keepLast));
  }

  protected async saveDeleteAfter(threadId: string, at: string | null): Promise<boolean> {
    return this.#use(
      ({ sql }) => sql.setDeleteAfter.run(comparableTime(at), threadId).changes === 1,
    );
  }

  protected async loadExpiredThreads(now: string): Promise<string[]> {
    return this.#use(({ sql }) => {
      const rows = sql.selectExpiredThreads.all(now) as { thread_id: string }[];
      return rows.map((row) => row.thread_id);
    });
  }

  protected async loadThreads(filter: ThreadFilter): Promise<ThreadSummary[]> {
    const { userId, parentThreadId, offset } = filter;
    // SQLite's LIMIT takes -1 for no limit.
    const limit = filter.limit ?? -1;
    return this.#use(({ sql }) => {
      const rows =
        parentThreadId !== null
          ? sql.selectChildThreads.all({ parentThreadId, userId: userId ?? null, limit, offset })
          : userId === undefined
            ? sql.selectThreads.all(limit, offset)
            : sql.selectThreadsOfUser.all(userId, limit, offset);
      return (rows as ThreadRow[]).map(toThreadSummary);
    });
  }

  /**
   * Deletes the thread and its descendants: each row, and with it (`ON DELETE CASCADE`) its
   * states, messages and ledger; their stop requests, which need no thread row, in the same
   * transaction.
   */
  protected async removeThread(threadId: string): Promise<string[]> {
    return this.#use(({ deleteThread, heads }) => {
      const deleted = deleteThread.immediate(threadId);
      for (const id of deleted) heads.forget(id);
      return deleted;
    });
  }

  /** Queued completions first: a call whose result is only queued would read as in doubt. */
  protected async copyStoredThread(from: string, to: string, incarnation: string) {
    return this.#use(({ copyThread, ledger }) => {
      ledger.flushCompletions();
      return copyThread.immediate(from, to, incarnation);
    });
  }

  /** Counted even before the thread's first write: a run counts requests before it writes. */
  protected async addStopRequest(threadId: string): Promise<void> {
    this.#use(({ sql }) => sql.requestStop.run(threadId));
  }

  protected async loadStopRequests(threadId: string): Promise<number> {
    return this.#use(({ sql }) => {
      const row = sql.countStopRequests.get(threadId) as { count: number } | undefined;
      return row?.count ?? 0;
    });
  }

  protected async loadCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    return this.#use(({ ledger }) => ledger.getCalls(threadId, keys));
  }

  protected async insertClaims(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]> {
    return this.#use(({ ledger }) => ledger.claimCalls(threadId, claims));
  }

  protected async recordCompletion(
    threadId: string,
    attempt: AttemptRef,
    result: unknown,
  ): Promise<boolean> {
    return this.#use(({ ledger }) => ledger.completeCall(threadId, attempt, result));
  }

  protected async recordRelease(threadId: string, attempt: AttemptRef): Promise<boolean> {
    return this.#use(({ ledger }) => ledger.releaseCall(threadId, attempt));
  }

  protected async renewClaims(
    threadId: string,
    attempts: AttemptRef[],
    leaseMs: number,
  ): Promise<AttemptRef[]> {
    return this.#use(({ ledger }) => ledger.heartbeatCalls(threadId, attempts, leaseMs));
  }

  protected async loadAllCalls(threadId: string): Promise<LedgerEntry[]> {
    return this.#use(({ ledger }) => ledger.listCalls(threadId));
  }

  /** Opens the file and prepares the statements and transactions of one connection. */
  #connect(): Connection {
    const db = openDatabase(this.#settings);
    const sql = prepareStatements(db);
    const mapError = (operation: string, error: unknown) =>
      mapSqliteError(operation, this.#settings.path, error);
    const ledger = new SqliteLedger(db, sql, mapError);
    const keepVersions = this.keepVersions;
    return {
      db,
      sql,
      ledger,
      heads: new WrittenHeads(),
      commitWrite: db.transaction(
        (write: StoreWrite, encoded: EncodedWrite, head: WrittenHead | undefined) =>
          commitWrite(sql, ledger, write, encoded, { keepVersions, head }),
      ),
      readMessages: db.transaction((threadId: string, page: MessagePage) =>
        readMessages(sql, threadId, page),
      ),
      pruneVersions: db.transaction((threadId: string, keepLast: number) =>
        pruneVersions(sql, threadId, keepLast),
      ),
      copyThread: db.transaction((from: string, to: string, incarnation: string) =>
        copyThread(sql, from, to, incarnation),
      ),
      deleteThread: db.transaction((threadId: string) => {
        const family = (sql.selectFamily.all(threadId) as { thread_id: string }[]).map(
          (row) => row.thread_id,
        );
        for (const id of family) sql.deleteThread.run(id);
        // A stop may be requested before the thread's first write: its count goes either way.
        for (const id of new Set([threadId, ...family])) sql.deleteStopRequests.run(id);
        return family;
      }),
    };
  }

  /**
   * Runs `body` on the connection. The base opened it before the first call and refuses calls
   * after `close()`, and it translates failures (`mapError`).
   */
  #use<T>(body: (connection: Connection) => T): T {
    if (!this.#connection) throw new Error("the connection is not open");
    return body(this.#connection);
  }
}

/**
 * The delete-after time as the sweep compares it, as text. ISO-8601 strings order as times only
 * for years 0000 to 9999: `toISOString` writes a later year as `+010000-…`, which sorts before
 * `2026-…`, so such a time (a natural way to say "never") is stored as never (NULL), and a time
 * before year 0 (long passed) as the first instant of year 0.
 */
function comparableTime(iso: string | null): string | null {
  if (iso === null || /^\d{4}-/.test(iso)) return iso;
  return iso.startsWith("+") ? null : "0000-01-01T00:00:00.000Z";
}

/** The connection settings of `options`, checked; a bad one is a `TypeError` naming `owner`. */
export function checkOptions(
  options: SqliteCheckpointerOptions,
  owner = "SqliteCheckpointer",
): ConnectionSettings {
  const { path = DEFAULT_SQLITE_PATH, synchronous = "FULL", busyTimeoutMs = 5000 } = options;
  const problem =
    typeof path !== "string" || path === ""
      ? `path must be a non-empty string, got ${JSON.stringify(path)}`
      : synchronous !== "FULL" && synchronous !== "NORMAL"
        ? `synchronous must be "FULL" or "NORMAL", got ${JSON.stringify(synchronous)}`
        : !Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0
          ? `busyTimeoutMs must be a whole number of milliseconds >= 0, got ${busyTimeoutMs}`
          : undefined;
  if (problem) throw new TypeError(`${owner}: ${problem}`);
  return { path, synchronous, busyTimeoutMs };
}
