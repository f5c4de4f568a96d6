import { ClaimLostError, StaleStateError, StorageError } from "../errors/errors.js";
import type {
  AttemptRef,
  ClaimResult,
  LedgerClaim,
  LedgerEntry,
  StartedLedgerEntry,
} from "./ledger-entry.js";
import type { Message } from "../messages/message.js";
import { BaseCheckpointer, type Page, type ThreadFilter } from "./base-checkpointer.js";
import type { StepCommit, StepWrite, ThreadCheckpoint, ThreadSummary } from "./checkpointer.js";
import { jsonCopy } from "./json-copy.js";

/** Options of {@link InMemoryCheckpointer}. */
export interface InMemoryCheckpointerOptions {
  /** Source of the timestamps it writes; defaults to the system clock. */
  clock?: () => Date;
}

/** A started entry as kept: the time left on its lease is computed when it is read. */
type StoredStarted = Omit<StartedLedgerEntry, "leaseExpiresInMs">;

/** A ledger entry as kept. */
type StoredEntry = Exclude<LedgerEntry, StartedLedgerEntry> | StoredStarted;

interface ThreadRecord {
  checkpoint: ThreadCheckpoint;
  messages: Message[];
  messageIds: Set<string>;
  /** The store's write counter at this thread's creation or last status change: orders `listThreads`. */
  writeSeq: number;
}

/**
 * A checkpointer that keeps every thread in this process's memory: for tests, examples and
 * single-process apps that can lose their threads on exit. Values are copied as through JSON on
 * the way in and out, as a SQL store keeps them, so no caller can change what is stored by
 * mutating an object it passed or received.
 *
 * @example
 * const app = new StateGraph()
 *   .addNode("MAIN", mainNode)
 *   .addEdge("MAIN", END)
 *   .setEntryPoint("MAIN")
 *   .compile({ checkpointer: new InMemoryCheckpointer() });
 * await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t1" });
 */
export class InMemoryCheckpointer extends BaseCheckpointer {
  readonly #clock: () => Date;
  readonly #threads = new Map<string, ThreadRecord>();
  /** Per thread, entries by key; a Map keeps first-claim order, which `listCalls` returns. */
  readonly #ledgers = new Map<string, Map<string, StoredEntry>>();
  /** Stop requests made per thread: counted, never cleared (see `Checkpointer`). */
  readonly #stops = new Map<string, number>();
  #writeSeq = 0;

  constructor(options: InMemoryCheckpointerOptions = {}) {
    super();
    this.#clock = options.clock ?? (() => new Date());
  }

  /** Nothing to open: the maps exist from the start. */
  protected async open(): Promise<void> {}

  /** Nothing to release; the threads stay readable to no one, as after a process exit. */
  protected async shutdown(): Promise<void> {}

  protected async loadCheckpoint(threadId: string): Promise<ThreadCheckpoint | null> {
    const record = this.#threads.get(threadId);
    return record ? jsonCopy(record.checkpoint) : null;
  }

  protected async commitCheckpoint(write: StepWrite): Promise<StepCommit> {
    const { threadId, expectedVersion, ledger: ledgerWrites } = write;
    const previous = this.#threads.get(threadId);
    const actualVersion = previous?.checkpoint.version ?? null;
    const otherLife =
      previous !== undefined && previous.checkpoint.incarnation !== write.incarnation;
    if ((actualVersion ?? 0) !== expectedVersion || otherLife) {
      throw new StaleStateError(threadId, expectedVersion, actualVersion);
    }
    for (const { attempt } of ledgerWrites.completions) {
      const held = this.#ledgers.get(threadId)?.get(attempt.key);
      if (held?.status !== "started" || held.attempt !== attempt.attempt) {
        throw new ClaimLostError(threadId, attempt.key, attempt.attempt);
      }
    }
    assertNewMessageIds(threadId, previous?.messageIds, write.newMessages);
    // Copy before changing anything: a value JSON rejects must not leave half a write.
    const copy = jsonCopy(write);
    const messages = previous?.messages ?? [];
    const messageIds = previous?.messageIds ?? new Set<string>();
    for (const message of copy.newMessages) {
      messages.push(message);
      messageIds.add(message.id);
    }
    const checkpoint: ThreadCheckpoint = {
      threadId,
      incarnation: write.incarnation,
      userId: write.userId ?? previous?.checkpoint.userId ?? null,
      version: expectedVersion + 1,
      step: write.step,
      currentNode: write.currentNode,
      // Absent for the plain chain, as a store without the field reads it.
      ...(copy.frontier ? { frontier: copy.frontier } : {}),
      status: write.status,
      values: copy.values,
      interrupts: copy.interrupts,
      resumeAnswers: copy.resumeAnswers,
      messageCount: messages.length,
      updatedAt: this.#now(),
    };
    // The listing order moves only on creation or a status change, as in the SQL stores.
    const relisted = previous === undefined || previous.checkpoint.status !== write.status;
    if (relisted) this.#writeSeq += 1;
    const writeSeq = relisted ? this.#writeSeq : previous.writeSeq;
    this.#threads.set(threadId, { checkpoint, messages, messageIds, writeSeq });
    // No await since the checks above: the thread and its ledger change as one.
    for (const { attempt, result } of copy.ledger.completions) {
      this.#complete(threadId, attempt, result);
    }
    const claims = this.#claimAll(threadId, copy.ledger.claims);
    return { version: checkpoint.version, claims };
  }

  protected async loadMessages(threadId: string, { offset, limit }: Page): Promise<Message[]> {
    const messages = this.#threads.get(threadId)?.messages ?? [];
    return jsonCopy(messages.slice(offset, limit === null ? undefined : offset + limit));
  }

  protected async loadThreads(filter: ThreadFilter): Promise<ThreadSummary[]> {
    const { userId, offset, limit } = filter;
    return (
      [...this.#threads.values()]
        .filter((record) => userId === undefined || record.checkpoint.userId === userId)
        // The write counter is the order writes happened in, even within one clock tick.
        .sort((a, b) => b.writeSeq - a.writeSeq)
        .slice(offset, limit === null ? undefined : offset + limit)
        .map(({ checkpoint }) => summarize(checkpoint))
    );
  }

  protected async removeThread(threadId: string): Promise<void> {
    this.#threads.delete(threadId);
    this.#ledgers.delete(threadId);
    this.#stops.delete(threadId);
  }

  protected async addStopRequest(threadId: string): Promise<void> {
    this.#stops.set(threadId, (this.#stops.get(threadId) ?? 0) + 1);
  }

  protected async loadStopRequests(threadId: string): Promise<number> {
    return this.#stops.get(threadId) ?? 0;
  }

  protected async loadCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    const ledger = this.#ledgers.get(threadId);
    const entries = [...new Set(keys)].flatMap((key) => ledger?.get(key) ?? []);
    return entries.map((entry) => this.#read(entry));
  }

  protected async insertClaims(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]> {
    return this.#claimAll(threadId, claims);
  }

  #claimAll(threadId: string, claims: readonly LedgerClaim[]): ClaimResult[] {
    // Claims go to a staging overlay that is applied only once every claim succeeded: the batch
    // is one transaction, and its cost does not grow with the thread's ledger.
    const ledger = this.#ledgers.get(threadId) ?? new Map<string, StoredEntry>();
    const staged = new Map<string, StoredEntry>();
    const view = {
      get: (key: string) => staged.get(key) ?? ledger.get(key),
      set: (key: string, entry: StoredEntry) => staged.set(key, entry),
    };
    const results = claims.map((claim) => this.#claim(threadId, view, claim));
    for (const [key, entry] of staged) ledger.set(key, entry);
    this.#ledgers.set(threadId, ledger);
    return results;
  }

  protected async recordCompletion(
    threadId: string,
    attempt: AttemptRef,
    result: unknown,
  ): Promise<boolean> {
    return this.#complete(threadId, attempt, result);
  }

  #complete(threadId: string, attempt: AttemptRef, result: unknown): boolean {
    return this.#replaceHeld(
      threadId,
      attempt,
      ({ heartbeatAt: _, leaseExpiresAt: __, ...held }) => ({
        ...held,
        status: "completed",
        result: jsonCopy(result),
        completedAt: this.#now(),
      }),
    );
  }

  protected async recordRelease(threadId: string, attempt: AttemptRef): Promise<boolean> {
    return this.#replaceHeld(
      threadId,
      attempt,
      ({ heartbeatAt: _, leaseExpiresAt: __, ...held }) => ({
        ...held,
        status: "interrupted",
      }),
    );
  }

  protected async renewClaims(
    threadId: string,
    attempts: AttemptRef[],
    leaseMs: number,
  ): Promise<AttemptRef[]> {
    const now = this.#clock().getTime();
    const heartbeatAt = new Date(now).toISOString();
    const leaseExpiresAt = new Date(now + leaseMs).toISOString();
    return attempts.filter(
      (attempt) =>
        !this.#replaceHeld(threadId, attempt, (held) => ({ ...held, heartbeatAt, leaseExpiresAt })),
    );
  }

  protected async loadAllCalls(threadId: string): Promise<LedgerEntry[]> {
    return [...(this.#ledgers.get(threadId)?.values() ?? [])].map((entry) => this.#read(entry));
  }

  /** One claim against `ledger`: expected attempt 0 inserts, n takes over attempt n. */
  #claim(
    threadId: string,
    ledger: Pick<Map<string, StoredEntry>, "get" | "set">,
    claim: LedgerClaim,
  ): ClaimResult {
    const existing = ledger.get(claim.key);
    if (!existing) {
      if (claim.expectedAttempt !== 0) {
        // A loss must report the entry that won, and there is none: the thread or its ledger
        // was deleted since the claimant read it. Failing the batch is the only honest answer.
        const attempt = `attempt ${claim.expectedAttempt} of call '${claim.key}'`;
        const why = `cannot take over ${attempt} on thread '${threadId}': it has no entry`;
        throw new StorageError("claimCalls", new Error(why));
      }
    } else if (existing.attempt !== claim.expectedAttempt) {
      return { won: false, key: claim.key, entry: this.#read(existing) };
    }
    const now = this.#clock().getTime();
    const entry: StoredEntry = {
      key: claim.key,
      toolName: claim.toolName,
      attempt: claim.expectedAttempt + 1,
      ownerRunId: claim.ownerRunId,
      startedAt: new Date(now).toISOString(),
      status: "started",
      heartbeatAt: new Date(now).toISOString(),
      leaseExpiresAt: new Date(now + claim.leaseMs).toISOString(),
    };
    ledger.set(claim.key, entry);
    return { won: true, key: claim.key, attempt: entry.attempt };
  }

  /**
   * Fencing: replaces the entry only while it is `started` by exactly `ref.attempt`, so a zombie
   * attempt (timed out, stopped, superseded) can never overwrite the ledger.
   */
  #replaceHeld(
    threadId: string,
    ref: AttemptRef,
    next: (held: StoredStarted) => StoredEntry,
  ): boolean {
    const ledger = this.#ledgers.get(threadId);
    const held = ledger?.get(ref.key);
    if (!ledger || held?.status !== "started" || held.attempt !== ref.attempt) return false;
    ledger.set(ref.key, next(held));
    return true;
  }

  /** A copy for the caller; a started entry gets the time left on its lease by this store's clock. */
  #read(entry: StoredEntry): LedgerEntry {
    const copy = jsonCopy(entry);
    if (copy.status !== "started") return copy;
    const leaseExpiresInMs = Date.parse(copy.leaseExpiresAt) - this.#clock().getTime();
    return { ...copy, leaseExpiresInMs };
  }

  #now(): string {
    return this.#clock().toISOString();
  }
}

function summarize(checkpoint: ThreadCheckpoint): ThreadSummary {
  const { threadId, userId, status, version, updatedAt } = checkpoint;
  return { threadId, userId, status, version, updatedAt };
}

/** Transcripts are append-only: an id already in the thread, or twice in one write, is refused. */
function assertNewMessageIds(
  threadId: string,
  known: ReadonlySet<string> | undefined,
  messages: Message[],
): void {
  const incoming = new Set<string>();
  for (const { id } of messages) {
    if (known?.has(id) || incoming.has(id)) {
      const why = `message '${id}' is already in the append-only transcript of '${threadId}'`;
      throw new StorageError("putCheckpoint", new Error(why));
    }
    incoming.add(id);
  }
}
