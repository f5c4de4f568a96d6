import type { Message } from "@tenxgraph/core";
import type {
  AttemptRef,
  ClaimResult,
  LedgerClaim,
  LedgerEntry,
  Page,
  StepCommit,
  StepWrite,
  ThreadCheckpoint,
  ThreadFilter,
  ThreadSummary,
} from "@tenxgraph/core/storage";
import { BaseCheckpointer, StaleStateError, StorageError } from "@tenxgraph/core/storage";
import type Database from "better-sqlite3";
import { SqliteLedger } from "./ledger.js";
import type { EncodedCompletion } from "./ledger.js";
import { mapSqliteError } from "./map-error.js";
import { openDatabase } from "./open-database.js";
import type { ConnectionSettings } from "./open-database.js";
import { toCheckpoint, toThreadSummary } from "./rows.js";
import type { CheckpointRow, ThreadRow } from "./rows.js";
import { prepareStatements } from "./sql.js";
import type { Statements } from "./sql.js";

/** Options of {@link SqliteCheckpointer}. */
export interface SqliteCheckpointerOptions {
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
  /** The transaction of `putCheckpoint` and `commitStep`, made once per connection. */
  commitWrite: Database.Transaction<(write: StepWrite, encoded: EncodedWrite) => StepCommit>;
  /** `deleteThread`'s transaction. */
  deleteThread: Database.Transaction<(threadId: string) => void>;
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
    super();
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

  protected async commitCheckpoint(write: StepWrite): Promise<StepCommit> {
    return this.#use(({ commitWrite }) => {
      // Encoded before the transaction: a value JSON cannot hold fails without touching the file.
      const encoded = encodeWrite(write);
      // State, messages and ledger writes commit in one transaction, so a crash cannot keep one
      // and lose another; the write lock is taken before the version is read, so the compare
      // and the fences are exact.
      return commitWrite.immediate(write, encoded);
    });
  }

  protected async loadMessages(threadId: string, { offset, limit }: Page): Promise<Message[]> {
    return this.#use(({ sql }) => {
      // SQLite's LIMIT takes -1 for no limit.
      const rows = sql.selectMessages.all(threadId, offset, limit ?? -1) as { body_json: string }[];
      return rows.map((row) => JSON.parse(row.body_json) as Message);
    });
  }

  protected async loadThreads({ userId, offset, limit }: ThreadFilter): Promise<ThreadSummary[]> {
    return this.#use(({ sql }) => {
      const rows =
        userId === undefined
          ? sql.selectThreads.all(limit ?? -1, offset)
          : sql.selectThreadsOfUser.all(userId, limit ?? -1, offset);
      return (rows as ThreadRow[]).map(toThreadSummary);
    });
  }

  /**
   * Deletes the thread row, and with it (`ON DELETE CASCADE`) its states, messages and ledger;
   * its stop requests, which need no thread row, in the same transaction.
   */
  protected async removeThread(threadId: string): Promise<void> {
    this.#use(({ deleteThread }) => deleteThread.immediate(threadId));
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
    return {
      db,
      sql,
      ledger,
      commitWrite: db.transaction((write: StepWrite, encoded: EncodedWrite) =>
        commitWrite(sql, ledger, write, encoded),
      ),
      deleteThread: db.transaction((threadId: string) => {
        sql.deleteThread.run(threadId);
        sql.deleteStopRequests.run(threadId);
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

interface EncodedWrite {
  valuesJson: string;
  interruptsJson: string;
  resumeAnswersJson: string;
  messages: { id: string; json: string }[];
  completions: EncodedCompletion[];
}

/** The write's JSON; the base refused a write carrying one message id twice. */
function encodeWrite(write: StepWrite): EncodedWrite {
  return {
    valuesJson: JSON.stringify(write.values),
    interruptsJson: JSON.stringify(write.interrupts),
    resumeAnswersJson: JSON.stringify(write.resumeAnswers),
    messages: write.newMessages.map((message) => ({
      id: message.id,
      json: JSON.stringify(message),
    })),
    completions: write.ledger.completions.map(({ attempt, result }) => ({
      key: attempt.key,
      attempt: attempt.attempt,
      resultJson: JSON.stringify(result) ?? "null",
    })),
  };
}

/**
 * The body of the step write's transaction: compare-and-swap the thread, record the riding
 * results (each fenced on its attempt), append the state and messages, then insert the riding
 * claims. A throw anywhere rolls all of it back. An empty ledger runs no statement of its own.
 */
function commitWrite(
  sql: Statements,
  ledger: SqliteLedger,
  write: StepWrite,
  encoded: EncodedWrite,
): StepCommit {
  const { threadId, expectedVersion } = write;
  const now = new Date();
  const at = now.toISOString();
  const firstSeq = moveThread(sql, write, encoded.messages.length, at);
  // A completion's update is its own fence: it changes no row unless the attempt still holds
  // the claim, and then ClaimLostError undoes the version just taken.
  ledger.completeInStep(threadId, encoded.completions, at);
  const version = expectedVersion + 1;
  appendState(sql, write, encoded, { version, firstSeq, now: at });
  const claims = ledger.claimInStep(threadId, write.ledger.claims, now);
  return { version, claims };
}

/**
 * Creates the thread or moves it one version on; returns the index of its first new message.
 * Throws `StaleStateError` when the thread is not at the write's version (of the write's life).
 */
function moveThread(sql: Statements, write: StepWrite, added: number, now: string): number {
  const { threadId, expectedVersion } = write;
  const thread = {
    threadId,
    incarnation: write.incarnation,
    userId: write.userId,
    status: write.status,
    expectedVersion,
    added,
    now,
  };
  const firstSeq = expectedVersion === 0 ? createThread(sql, thread) : advanceThread(sql, thread);
  if (firstSeq === null) {
    const actual = sql.selectVersion.get(threadId) as { version: number } | undefined;
    throw new StaleStateError(threadId, expectedVersion, actual?.version ?? null);
  }
  return firstSeq;
}

/** Inserts the new state row and appends the write's messages from index `firstSeq`. */
function appendState(
  sql: Statements,
  write: StepWrite,
  encoded: EncodedWrite,
  at: { version: number; firstSeq: number; now: string },
): void {
  const { threadId } = write;
  sql.insertState.run({
    threadId,
    version: at.version,
    step: write.step,
    currentNode: write.currentNode,
    status: write.status,
    valuesJson: encoded.valuesJson,
    interruptsJson: encoded.interruptsJson,
    resumeAnswersJson: encoded.resumeAnswersJson,
    now: at.now,
  });
  for (const [index, message] of encoded.messages.entries()) {
    try {
      sql.insertMessage.run(threadId, message.id, at.firstSeq + index, message.json);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "SQLITE_CONSTRAINT_PRIMARYKEY") throw duplicateMessage(threadId, message.id);
      throw error;
    }
  }
}

type ThreadParams = Record<"threadId" | "incarnation" | "status" | "now", string> & {
  userId: string | null;
  expectedVersion: number;
  added: number;
};

/** Inserts the thread at version 1; the first message index (0), or `null` if it exists. */
function createThread(sql: Statements, params: ThreadParams): number | null {
  const { expectedVersion: _, ...insert } = params;
  return sql.insertThread.run(insert).changes === 1 ? 0 : null;
}

/**
 * Moves the thread one version on; the first new message's index, or `null` when stale. A step
 * that keeps the status takes one statement; a status change, or a stale write, two.
 */
function advanceThread(sql: Statements, params: ThreadParams): number | null {
  type Moved = { first_seq: number } | undefined;
  const row = (sql.advanceThread.get(params) ?? sql.advanceThreadRelisted.get(params)) as Moved;
  return row?.first_seq ?? null;
}

function duplicateMessage(threadId: string, messageId: string): StorageError {
  const why = `message '${messageId}' is already in the append-only transcript of '${threadId}'`;
  return new StorageError("putCheckpoint", new Error(why));
}

function checkOptions(options: SqliteCheckpointerOptions): ConnectionSettings {
  const { path = DEFAULT_SQLITE_PATH, synchronous = "FULL", busyTimeoutMs = 5000 } = options;
  const problem =
    typeof path !== "string" || path === ""
      ? `path must be a non-empty string, got ${JSON.stringify(path)}`
      : synchronous !== "FULL" && synchronous !== "NORMAL"
        ? `synchronous must be "FULL" or "NORMAL", got ${JSON.stringify(synchronous)}`
        : !Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0
          ? `busyTimeoutMs must be a whole number of milliseconds >= 0, got ${busyTimeoutMs}`
          : undefined;
  if (problem) throw new TypeError(`SqliteCheckpointer: ${problem}`);
  return { path, synchronous, busyTimeoutMs };
}
