import { StorageError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { AttemptRef, ClaimResult, LedgerClaim, LedgerEntry } from "./ledger-entry.js";
import type { Message } from "../messages/message.js";
import type {
  Checkpointer,
  CheckpointWrite,
  StepCommit,
  StepLedgerWrites,
  StepWrite,
  ThreadCheckpoint,
  ThreadSummary,
  VersionPage,
} from "./checkpointer.js";
import { MAX_ID_LENGTH } from "./json-check.js";
import { requireWellFormed } from "./well-formed.js";

/** A page as every engine takes it: whole numbers >= 0; `limit` `null` means no limit. */
export interface Page {
  offset: number;
  limit: number | null;
}

/** A page of a transcript: of the latest version, or of `version` when it is not `null`. */
export interface MessagePage extends Page {
  version: number | null;
}

/** A page of versions, newest first: at most `limit` (`null`: all), older than `before` (`null`: any). */
export interface VersionRange {
  limit: number | null;
  before: number | null;
}

/** What every store does with old versions and expired threads, set by its options. */
export interface HistoryOptions {
  /**
   * Keep at most this many versions per thread: each write deletes, in its own transaction,
   * the versions it pushed out (their messages stay until `pruneVersions`). Default: keep all.
   */
  keepVersions?: number;
  /**
   * Run `deleteExpiredThreads` every this many milliseconds while the store is open (the timer
   * does not keep the process alive). Default: never; call it yourself.
   */
  deleteExpiredEveryMs?: number;
}

/**
 * A write as a store's `commitCheckpoint` gets it: checked, with every optional field of
 * {@link CheckpointWrite} filled in (`parentVersion` is `expectedVersion` unless it forks).
 */
export interface StoreWrite extends StepWrite {
  parentVersion: number;
  node: string | null;
  runId: string | null;
  replacedMessages: Message[];
  removedMessageIds: string[];
  /** Read only when the write creates the thread (`expectedVersion` 0). */
  parentThreadId: string | null;
}

/** A `listThreads` filter, paged like {@link Page}. */
export interface ThreadFilter extends Page {
  userId: string | undefined;
  /** The thread whose direct children to list; `null`: the top-level threads. */
  parentThreadId: string | null;
}

/**
 * The base of every checkpointer: it does what each store would otherwise repeat, once, and
 * leaves the engine's work to the store. Like Kysely's `RuntimeDriver` around a driver, each
 * public method of {@link Checkpointer}:
 *
 * - refuses use after `close()`, and runs `open()` once before the first operation (again on
 *   the next call if it failed), so `setup()` is optional;
 * - refuses ids a store cannot keep exactly, before anything is written: a thread id that is not
 *   a string of at most {@link MAX_ID_LENGTH} characters, and any id (thread, user, message,
 *   ledger key, tool, run) holding a lone surrogate or U+0000 (`requireWellFormed`);
 * - refuses a write that carries one message id twice;
 * - turns a page into whole numbers (`Infinity` is no limit; fractions are floored);
 * - translates failures with `mapError`: tenxgraph errors pass, anything else becomes a
 *   `StorageError` (code `STORAGE_FAILURE_001`) naming the operation.
 *
 * then calls the store's protected method of the same purpose. All errors are `StorageError`
 * unless the contract names another (`StaleStateError` for a stale write).
 *
 * @example
 * class MyCheckpointer extends BaseCheckpointer {
 *   protected async open() { await this.#db.migrate(); }
 *   protected async shutdown() { await this.#db.end(); }
 *   protected async loadCheckpoint(threadId: string) { ... }
 *   // ...one method per operation of the Checkpointer interface
 * }
 */
export abstract class BaseCheckpointer implements Checkpointer {
  /** How many versions a write keeps per thread (`null`: all), checked at construction. */
  protected readonly keepVersions: number | null;
  readonly #deleteExpiredEveryMs: number | null;
  #sweepTimer: NodeJS.Timeout | undefined;
  #ready: Promise<void> | undefined;
  /** Set once `open()` succeeded: later calls go straight to the engine, with no extra await. */
  #opened = false;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options: HistoryOptions = {}) {
    this.keepVersions = optionalWhole("keepVersions", options.keepVersions, 1);
    this.#deleteExpiredEveryMs = optionalWhole(
      "deleteExpiredEveryMs",
      options.deleteExpiredEveryMs,
      1,
    );
  }

  /** Creates or migrates the schema and opens connections. Run once, before the first use. */
  protected abstract open(): Promise<void>;
  /** Releases connections; called once by the first `close()`. */
  protected abstract shutdown(): Promise<void>;
  protected abstract loadCheckpoint(threadId: string): Promise<ThreadCheckpoint | null>;
  /**
   * `putCheckpoint` and `commitStep` both land here: `write` has well-formed ids, distinct new
   * message ids, and ledger writes checked as {@link StepLedgerWrites} says (empty lists for
   * `putCheckpoint`). One transaction: the version compare (`StaleStateError`), the fence of
   * every completion (`ClaimLostError`), then the checkpoint, messages, completions and claims.
   */
  protected abstract commitCheckpoint(write: StoreWrite): Promise<StepCommit>;
  protected abstract loadMessages(threadId: string, page: MessagePage): Promise<Message[]>;
  protected abstract loadVersion(
    threadId: string,
    version: number,
  ): Promise<ThreadCheckpoint | null>;
  protected abstract loadVersions(
    threadId: string,
    range: VersionRange,
  ): Promise<ThreadCheckpoint[]>;
  /** Keeps the newest `keepLast` (>= 1) versions and the messages they hold; returns how many went. */
  protected abstract removeVersions(threadId: string, keepLast: number): Promise<number>;
  protected abstract saveDeleteAfter(threadId: string, at: string | null): Promise<boolean>;
  /** Ids of the threads whose delete-after time is at or before `now` (ISO-8601). */
  protected abstract loadExpiredThreads(now: string): Promise<string[]>;
  protected abstract loadThreads(filter: ThreadFilter): Promise<ThreadSummary[]>;
  /**
   * Deletes the thread and every descendant (by `parentThreadId`, not by id prefix) with all
   * they own, in one transaction; returns the ids it deleted (none for an unknown thread).
   */
  protected abstract removeThread(threadId: string): Promise<string[]>;
  protected abstract addStopRequest(threadId: string): Promise<void>;
  protected abstract loadStopRequests(threadId: string): Promise<number>;
  protected abstract loadCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]>;
  protected abstract insertClaims(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]>;
  protected abstract recordCompletion(
    threadId: string,
    attempt: AttemptRef,
    result: unknown,
  ): Promise<boolean>;
  protected abstract recordRelease(threadId: string, attempt: AttemptRef): Promise<boolean>;
  protected abstract renewClaims(
    threadId: string,
    attempts: AttemptRef[],
    leaseMs: number,
  ): Promise<AttemptRef[]>;
  protected abstract loadAllCalls(threadId: string): Promise<LedgerEntry[]>;

  /**
   * The error a failure of `operation` becomes. The default passes tenxgraph errors and wraps
   * anything else in a `StorageError`; a store maps its engine's codes to clearer messages.
   */
  protected mapError(operation: string, error: unknown): unknown {
    return isTenxgraphError(error) ? error : new StorageError(operation, error);
  }

  /** True once `close()` was called: an `open()` still running should not open more. */
  protected get closed(): boolean {
    return this.#closed;
  }

  async setup(): Promise<void> {
    await this.run("setup", () => undefined);
  }

  /** Idempotent: every call waits for the one shutdown. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweepTimer);
    this.#closing ??= this.shutdown();
    await this.#closing;
  }

  async getCheckpoint(threadId: string): Promise<ThreadCheckpoint | null> {
    const operation = "getCheckpoint";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.loadCheckpoint(threadId));
  }

  async putCheckpoint(write: CheckpointWrite): Promise<number> {
    // Not a spread: a spread followed by a new key is V8's slow path (microseconds on Node 20).
    const step: StepWrite = Object.assign({}, write, { ledger: NO_LEDGER_WRITES });
    return (await this.#commit("putCheckpoint", step)).version;
  }

  async commitStep(write: StepWrite): Promise<StepCommit> {
    const operation = "commitStep";
    requireLedgerWrites(operation, write.ledger);
    return this.#commit(operation, write);
  }

  async #commit(operation: string, write: StepWrite): Promise<StepCommit> {
    const { threadId, userId, currentNode } = write;
    requireThreadId(operation, threadId);
    requireUserId(operation, userId);
    // Without it the write could not be told from one about a deleted thread of the same id.
    requireId(operation, "incarnation", write.incarnation);
    requireWellFormed(operation, { currentNode });
    requireWellFormed(operation, { node: write.node ?? null, runId: write.runId ?? null });
    const parentThreadId = write.parentThreadId ?? null;
    if (parentThreadId !== null) requireId(operation, "parentThreadId", parentThreadId);
    requireTranscriptChange(operation, write);
    const parentVersion = write.parentVersion ?? write.expectedVersion;
    const validParent =
      Number.isInteger(parentVersion) &&
      (write.expectedVersion === 0 ? parentVersion === 0 : parentVersion >= 1) &&
      parentVersion <= write.expectedVersion;
    if (!validParent) {
      const why =
        `parentVersion ${parentVersion} is not a version this write can continue: ` +
        `one of 1..${write.expectedVersion} (or 0 to create the thread)`;
      throw new StorageError(operation, new Error(why));
    }
    const complete: StoreWrite = {
      ...write,
      // Absent is no user, as null: the write keeps the thread's owner.
      userId: userId ?? null,
      parentVersion,
      node: write.node ?? null,
      runId: write.runId ?? null,
      replacedMessages: write.replacedMessages ?? [],
      removedMessageIds: write.removedMessageIds ?? [],
      parentThreadId,
    };
    return this.run(operation, () => this.commitCheckpoint(complete));
  }

  async listMessages(
    threadId: string,
    page: { offset?: number; limit?: number; version?: number } = {},
  ): Promise<Message[]> {
    const operation = "listMessages";
    requireThreadId(operation, threadId);
    const version = page.version === undefined ? null : requireVersion(operation, page.version);
    return this.run(operation, () => this.loadMessages(threadId, { ...wholePage(page), version }));
  }

  async getVersion(threadId: string, version: number): Promise<ThreadCheckpoint | null> {
    const operation = "getVersion";
    requireThreadId(operation, threadId);
    requireVersion(operation, version);
    return this.run(operation, () => this.loadVersion(threadId, version));
  }

  async listVersions(threadId: string, page: VersionPage = {}): Promise<ThreadCheckpoint[]> {
    const operation = "listVersions";
    requireThreadId(operation, threadId);
    const before = page.before === undefined ? null : requireVersion(operation, page.before);
    const { limit } = wholePage({ limit: page.limit });
    return this.run(operation, () => this.loadVersions(threadId, { limit, before }));
  }

  async pruneVersions(threadId: string, options: { keepLast: number }): Promise<number> {
    const operation = "pruneVersions";
    requireThreadId(operation, threadId);
    const keepLast = options?.keepLast;
    if (!Number.isInteger(keepLast) || keepLast < 1) {
      const why = `keepLast must be a whole number >= 1 (the latest version is always kept), got ${String(keepLast)}`;
      throw new StorageError(operation, new Error(why));
    }
    return this.run(operation, () => this.removeVersions(threadId, keepLast));
  }

  async setDeleteAfter(threadId: string, at: Date | null): Promise<boolean> {
    const operation = "setDeleteAfter";
    requireThreadId(operation, threadId);
    if (at !== null && (!(at instanceof Date) || Number.isNaN(at.getTime()))) {
      throw new StorageError(
        operation,
        new Error("the delete-after time must be a valid Date or null"),
      );
    }
    return this.run(operation, () => this.saveDeleteAfter(threadId, at?.toISOString() ?? null));
  }

  async deleteExpiredThreads(): Promise<string[]> {
    return this.run("deleteExpiredThreads", async () => {
      const expired = await this.loadExpiredThreads(new Date().toISOString());
      // One thread at a time, each as `deleteThread` deletes it (descendants, ledger, stop
      // requests, cache). An expired descendant of an expired thread may already be gone.
      const deleted = new Set<string>();
      for (const threadId of expired) {
        for (const id of await this.removeThread(threadId)) deleted.add(id);
      }
      return [...deleted];
    });
  }

  async listThreads(
    filter: { userId?: string; parentThreadId?: string; limit?: number; offset?: number } = {},
  ): Promise<ThreadSummary[]> {
    const operation = "listThreads";
    if (filter.userId !== undefined) requireUserId(operation, filter.userId);
    const parentThreadId = filter.parentThreadId ?? null;
    if (parentThreadId !== null) requireThreadId(operation, parentThreadId);
    const paged = { userId: filter.userId, parentThreadId, ...wholePage(filter) };
    return this.run(operation, () => this.loadThreads(paged));
  }

  async deleteThread(threadId: string): Promise<void> {
    const operation = "deleteThread";
    requireThreadId(operation, threadId);
    await this.run(operation, () => this.removeThread(threadId));
  }

  async requestStop(threadId: string): Promise<void> {
    const operation = "requestStop";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.addStopRequest(threadId));
  }

  async countStopRequests(threadId: string): Promise<number> {
    const operation = "countStopRequests";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.loadStopRequests(threadId));
  }

  async getCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    const operation = "getCalls";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.loadCalls(threadId, keys));
  }

  async claimCalls(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]> {
    const operation = "claimCalls";
    requireThreadId(operation, threadId);
    for (const { key, toolName, ownerRunId } of claims) {
      requireWellFormed(operation, { key, toolName, ownerRunId });
    }
    return this.run(operation, () => this.insertClaims(threadId, claims));
  }

  async completeCall(threadId: string, attempt: AttemptRef, result: unknown): Promise<boolean> {
    const operation = "completeCall";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.recordCompletion(threadId, attempt, result));
  }

  async releaseCall(threadId: string, attempt: AttemptRef): Promise<boolean> {
    const operation = "releaseCall";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.recordRelease(threadId, attempt));
  }

  async heartbeatCalls(
    threadId: string,
    attempts: AttemptRef[],
    leaseMs: number,
  ): Promise<AttemptRef[]> {
    const operation = "heartbeatCalls";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.renewClaims(threadId, attempts, leaseMs));
  }

  async listCalls(threadId: string): Promise<LedgerEntry[]> {
    const operation = "listCalls";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.loadAllCalls(threadId));
  }

  /**
   * Runs `body` as `operation` under the lifecycle rules and error mapping above: for a store's
   * own operations (a cache) as for the contract's.
   */
  protected async run<T>(operation: string, body: () => T | Promise<T>): Promise<T> {
    const closed = () => new StorageError(operation, new Error("checkpointer is closed"));
    if (this.#closed) throw closed();
    try {
      if (!this.#opened) {
        await (this.#ready ??= this.#open());
        // Closed while it opened: the engine may already be released.
        if (this.#closed) throw closed();
      }
      return await body();
    } catch (error) {
      throw this.mapError(operation, error);
    }
  }

  async #open(): Promise<void> {
    try {
      await this.open();
      this.#opened = true;
      this.#startSweeps();
    } catch (error) {
      this.#ready = undefined; // the next call tries again
      throw error;
    }
  }

  /** The timer of `deleteExpiredEveryMs`; a failed sweep is reported and tried again next time. */
  #startSweeps(): void {
    if (this.#deleteExpiredEveryMs === null || this.#sweepTimer) return;
    this.#sweepTimer = setInterval(() => {
      this.deleteExpiredThreads().catch((error: unknown) => {
        if (this.#closed) return;
        process.emitWarning(`tenxgraph: deleting expired threads failed: ${String(error)}`);
      });
    }, this.#deleteExpiredEveryMs);
    this.#sweepTimer.unref();
  }
}

const NO_LEDGER_WRITES: StepLedgerWrites = Object.freeze({
  completions: Object.freeze([]),
  claims: Object.freeze([]),
});

/**
 * Ledger writes a store can apply as given: well-formed keys and ids, positive whole attempts,
 * claims that only insert (expected attempt 0) with a positive lease, and no key twice, since a
 * key written twice in one transaction has no order a reader could rely on.
 */
function requireLedgerWrites(operation: string, ledger: StepLedgerWrites | undefined): void {
  const fail = (why: string) => new StorageError(operation, new Error(why));
  if (!ledger || !Array.isArray(ledger.completions) || !Array.isArray(ledger.claims)) {
    throw fail("ledger must be { completions: [...], claims: [...] }");
  }
  const keys = new Set<string>();
  const once = (key: string) => {
    if (keys.has(key)) throw fail(`ledger key '${key}' is written twice in one step write`);
    keys.add(key);
  };
  for (const { attempt } of ledger.completions) {
    requireWellFormed(operation, { key: attempt.key });
    if (!Number.isInteger(attempt.attempt) || attempt.attempt < 1) {
      throw fail(
        `completion of '${attempt.key}' names attempt ${attempt.attempt}; attempts start at 1`,
      );
    }
    once(attempt.key);
  }
  for (const { key, toolName, ownerRunId, expectedAttempt, leaseMs } of ledger.claims) {
    requireWellFormed(operation, { key, toolName, ownerRunId });
    if (expectedAttempt !== 0) {
      throw fail(
        `claim of '${key}' expects attempt ${expectedAttempt}; a claim in a step write only inserts (expectedAttempt 0)`,
      );
    }
    if (!Number.isFinite(leaseMs) || leaseMs <= 0) {
      throw fail(`claim of '${key}' has lease ${leaseMs} ms; it must be a positive number`);
    }
    once(key);
  }
}

/**
 * The transcript change of a write, as a store can apply it: well-formed ids, none twice, and
 * each message in at most one of appended, replaced and removed.
 */
function requireTranscriptChange(operation: string, write: CheckpointWrite): void {
  const { threadId } = write;
  const seen = new Map<string, string>();
  const once = (id: string, as: string) => {
    requireWellFormed(operation, { messageId: id });
    const before = seen.get(id);
    if (before !== undefined) {
      const why =
        before === as && as === "appended"
          ? `message '${id}' is already in the append-only transcript of '${threadId}'`
          : `message '${id}' is both ${before} and ${as} in one write to '${threadId}'`;
      throw new StorageError(operation, new Error(why));
    }
    seen.set(id, as);
  };
  for (const { id } of write.newMessages) once(id, "appended");
  for (const { id } of write.replacedMessages ?? []) once(id, "replaced");
  for (const id of write.removedMessageIds ?? []) once(id, "removed");
}

/** A version number: a whole number >= 1. */
function requireVersion(operation: string, version: unknown): number {
  if (typeof version === "number" && Number.isInteger(version) && version >= 1) return version;
  throw new StorageError(
    operation,
    new Error(`a version must be a whole number >= 1, got ${String(version)}`),
  );
}

/** An option that is absent, or a whole number >= `min`. */
function optionalWhole(name: string, value: number | undefined, min: number): number | null {
  if (value === undefined) return null;
  if (Number.isInteger(value) && value >= min) return value;
  throw new StorageError(
    "configure",
    new Error(`${name} must be a whole number >= ${min}, got ${String(value)}`),
  );
}

/** A thread id every store can key and index: a string of at most `MAX_ID_LENGTH`, well-formed. */
function requireThreadId(operation: string, threadId: unknown): void {
  requireId(operation, "threadId", threadId);
}

/** A user id, when there is one, is checked like a thread id. */
function requireUserId(operation: string, userId: unknown): void {
  if (userId !== null && userId !== undefined) requireId(operation, "userId", userId);
}

function requireId(operation: string, name: string, value: unknown): void {
  if (typeof value !== "string") {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    throw new StorageError(operation, new Error(`${name} must be a string, got ${got}`));
  }
  if (value.length > MAX_ID_LENGTH) {
    const why = `${name} is ${value.length} characters long; the limit is ${MAX_ID_LENGTH}`;
    throw new StorageError(operation, new Error(why));
  }
  requireWellFormed(operation, { [name]: value });
}

/**
 * A page in whole numbers: `NaN` and negative values are 0 (as for `slice`), fractions are
 * floored, `Infinity` is no limit (or, as an offset, past every row).
 */
function wholePage(page: { offset?: number; limit?: number }): Page {
  const { offset = 0, limit = Infinity } = page;
  return {
    offset: offset === Infinity ? Number.MAX_SAFE_INTEGER : whole(offset),
    limit: limit === Infinity ? null : whole(limit),
  };
}

function whole(value: number): number {
  return Number.isFinite(value) ? Math.max(0, Math.floor(value)) : 0;
}
