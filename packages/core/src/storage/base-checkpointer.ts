import { StorageError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { AttemptRef, ClaimResult, LedgerClaim, LedgerEntry } from "./ledger-entry.js";
import type { Message } from "../messages/message.js";
import type {
  Checkpointer,
  CheckpointRead,
  CheckpointWrite,
  StepCommit,
  StepWrite,
  ThreadCheckpoint,
  ThreadSummary,
  VersionPage,
} from "./checkpointer.js";
import {
  closedError,
  optionalWhole,
  requireThreadId,
  requireUserId,
  requireVersion,
  wholePage,
} from "./store-checks.js";
import {
  completeWrite,
  NO_LEDGER_WRITES,
  requireLedgerWrites,
  type StoreWrite,
} from "./store-write.js";
import { requireWellFormed } from "./well-formed.js";
import { uuidv7 } from "../messages/ids.js";

import type {
  HistoryOptions,
  MessagePage,
  ThreadFilter,
  VersionRange,
} from "./base-checkpointer-types.js";

export type { Page } from "./store-checks.js";
export type { StoreWrite } from "./store-write.js";
export type {
  HistoryOptions,
  MessagePage,
  ThreadFilter,
  VersionRange,
} from "./base-checkpointer-types.js";

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
  /** Both reads at once by default; a store with round trips to save answers in one. */
  protected async loadCheckpointAndStops(threadId: string): Promise<CheckpointRead> {
    const [checkpoint, stopRequests] = await Promise.all([
      this.loadCheckpoint(threadId),
      this.loadStopRequests(threadId),
    ]);
    return { checkpoint, stopRequests };
  }
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
  /** One transaction: `copyRefusal`'s `ThreadCopyError` (nothing written), else the copy. */
  protected abstract copyStoredThread(
    from: string,
    to: string,
    incarnation: string,
  ): Promise<ThreadCheckpoint>;
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

  async getCheckpointAndStops(threadId: string): Promise<CheckpointRead> {
    const operation = "getCheckpointAndStops";
    requireThreadId(operation, threadId);
    return this.run(operation, () => this.loadCheckpointAndStops(threadId));
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

  /** Not `async`: both callers are, and a layer less is a promise less on every step. */
  #commit(operation: string, write: StepWrite): Promise<StepCommit> {
    const complete = completeWrite(operation, write);
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

  async copyThread(fromThreadId: string, toThreadId: string): Promise<ThreadCheckpoint> {
    const operation = "copyThread";
    requireThreadId(operation, fromThreadId);
    requireThreadId(operation, toThreadId);
    // A fresh life: a write meant for the source can never land in the copy.
    const incarnation = uuidv7();
    return this.run(operation, () => this.copyStoredThread(fromThreadId, toThreadId, incarnation));
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
    if (this.#closed) throw closedError(operation);
    try {
      if (!this.#opened) {
        await (this.#ready ??= this.#open());
        // Closed while it opened: the engine may already be released.
        if (this.#closed) throw closedError(operation);
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
