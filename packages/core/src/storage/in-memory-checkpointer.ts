import {
  ClaimLostError,
  StaleStateError,
  StorageError,
  ThreadOwnerError,
} from "../errors/errors.js";
import type {
  AttemptRef,
  ClaimResult,
  LedgerClaim,
  LedgerEntry,
  StartedLedgerEntry,
} from "./ledger-entry.js";
import type { Message } from "../messages/message.js";
import {
  BaseCheckpointer,
  type HistoryOptions,
  type MessagePage,
  type StoreWrite,
  type ThreadFilter,
  type VersionRange,
} from "./base-checkpointer.js";
import type { StepCommit, ThreadCheckpoint, ThreadSummary } from "./checkpointer.js";
import { jsonCopy } from "./json-copy.js";
import {
  childRanges,
  rangeSeqs,
  rangesLength,
  seqsHeldByAny,
  sliceRanges,
  type SeqRanges,
} from "./transcript-ranges.js";

/** Options of {@link InMemoryCheckpointer}. */
export interface InMemoryCheckpointerOptions extends HistoryOptions {
  /** Source of the timestamps it writes; defaults to the system clock. */
  clock?: () => Date;
}

/** A started entry as kept: the time left on its lease is computed when it is read. */
type StoredStarted = Omit<StartedLedgerEntry, "leaseExpiresInMs">;

/** A ledger entry as kept. */
type StoredEntry = Exclude<LedgerEntry, StartedLedgerEntry> | StoredStarted;

/** A kept version: its checkpoint, and the message rows its transcript holds. */
interface StoredVersion {
  checkpoint: ThreadCheckpoint;
  transcript: SeqRanges;
}

interface ThreadRecord {
  /** The latest version. */
  head: StoredVersion;
  /** Kept versions by number, the head among them. */
  versions: Map<number, StoredVersion>;
  /** The append-only message table: rows by seq (pruning deletes the rows no version holds). */
  rows: Map<number, Message>;
  nextSeq: number;
  /** The head transcript's message ids and their rows: spares a scan per appending write. */
  headIds: Map<string, number>;
  /** The store's write counter at this thread's creation or last status change: orders `listThreads`. */
  writeSeq: number;
  deleteAfter: string | null;
  /** Set by the write that created the thread; a child is listed under it and deleted with it. */
  parentThreadId: string | null;
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
    super(options);
    this.#clock = options.clock ?? (() => new Date());
  }

  /** Nothing to open: the maps exist from the start. */
  protected async open(): Promise<void> {}

  /** Nothing to release; the threads stay readable to no one, as after a process exit. */
  protected async shutdown(): Promise<void> {}

  protected async loadCheckpoint(threadId: string): Promise<ThreadCheckpoint | null> {
    const record = this.#threads.get(threadId);
    return record ? jsonCopy(record.head.checkpoint) : null;
  }

  protected async commitCheckpoint(write: StoreWrite): Promise<StepCommit> {
    const { threadId, expectedVersion, ledger: ledgerWrites } = write;
    const previous = this.#threads.get(threadId);
    const actualVersion = previous?.head.checkpoint.version ?? null;
    const otherLife =
      previous !== undefined && previous.head.checkpoint.incarnation !== write.incarnation;
    if ((actualVersion ?? 0) !== expectedVersion || otherLife) {
      throw new StaleStateError(threadId, expectedVersion, actualVersion);
    }
    // The write that created the thread set its owner; no later write changes it.
    const owner = previous?.head.checkpoint.userId ?? null;
    if (previous && write.userId !== null && write.userId !== owner) {
      throw new ThreadOwnerError(threadId, write.userId);
    }
    for (const { attempt } of ledgerWrites.completions) {
      const held = this.#ledgers.get(threadId)?.get(attempt.key);
      if (held?.status !== "started" || held.attempt !== attempt.attempt) {
        throw new ClaimLostError(threadId, attempt.key, attempt.attempt);
      }
    }
    const parent = this.#parentOf(previous, write);
    const parentIds = parent.ids;
    const change = transcriptChange(threadId, parentIds, write);
    // Copy before changing anything: a value JSON rejects must not leave half a write.
    const copy = jsonCopy(write);
    const record: ThreadRecord = previous ?? {
      head: undefined as unknown as StoredVersion,
      versions: new Map(),
      rows: new Map(),
      nextSeq: 0,
      headIds: new Map(),
      writeSeq: 0,
      deleteAfter: null,
      parentThreadId: write.parentThreadId,
    };
    // New rows: the replacing messages first, then the appended ones, in order.
    const replaced = new Map<number, number>();
    for (const message of copy.replacedMessages) {
      replaced.set(parentIds.get(message.id)!, record.nextSeq);
      record.rows.set(record.nextSeq++, message);
    }
    const first = record.nextSeq;
    for (const message of copy.newMessages) record.rows.set(record.nextSeq++, message);
    const transcript = childRanges(parent.transcript, {
      removed: change.removedSeqs,
      replaced,
      appended: { first, count: copy.newMessages.length },
    });
    const checkpoint: ThreadCheckpoint = {
      threadId,
      incarnation: write.incarnation,
      userId: previous ? owner : write.userId,
      version: expectedVersion + 1,
      parentVersion: write.parentVersion === 0 ? null : write.parentVersion,
      node: write.node,
      runId: write.runId,
      step: write.step,
      currentNode: write.currentNode,
      // Absent for the plain chain, as a store without the field reads it.
      ...(copy.frontier ? { frontier: copy.frontier } : {}),
      status: write.status,
      values: copy.values,
      interrupts: copy.interrupts,
      resumeAnswers: copy.resumeAnswers,
      messageCount: rangesLength(transcript),
      updatedAt: this.#now(),
      // Recorded by the thread's first write, as the SQL stores do; later writes cannot change it.
      parentThreadId: record.parentThreadId,
    };
    // The listing order moves only on creation or a status change, as in the SQL stores.
    const relisted = previous === undefined || previous.head.checkpoint.status !== write.status;
    if (relisted) record.writeSeq = ++this.#writeSeq;
    record.headIds = change.plainAppend
      ? appendIds(parentIds, copy.newMessages, first)
      : idsOf(record.rows, transcript);
    record.head = { checkpoint, transcript };
    record.versions.set(checkpoint.version, record.head);
    if (this.keepVersions !== null) {
      for (const version of record.versions.keys()) {
        if (version <= checkpoint.version - this.keepVersions) record.versions.delete(version);
      }
    }
    this.#threads.set(threadId, record);
    // No await since the checks above: the thread and its ledger change as one.
    for (const { attempt, result } of copy.ledger.completions) {
      this.#complete(threadId, attempt, result);
    }
    const claims = this.#claimAll(threadId, copy.ledger.claims);
    return { version: checkpoint.version, claims };
  }

  /** The version a write continues, with its message ids; a missing one fails the write. */
  #parentOf(
    record: ThreadRecord | undefined,
    write: StoreWrite,
  ): { transcript: SeqRanges; ids: Map<string, number> } {
    if (write.parentVersion === 0) return { transcript: [], ids: new Map() };
    if (record && write.parentVersion === record.head.checkpoint.version) {
      return { transcript: record.head.transcript, ids: record.headIds };
    }
    const parent = record?.versions.get(write.parentVersion);
    if (!record || !parent) {
      const why = `version ${write.parentVersion} of thread '${write.threadId}' is not kept (pruned, or never written): it cannot be continued`;
      throw new StorageError("putCheckpoint", new Error(why));
    }
    return { transcript: parent.transcript, ids: idsOf(record.rows, parent.transcript) };
  }

  protected async loadMessages(
    threadId: string,
    { offset, limit, version }: MessagePage,
  ): Promise<Message[]> {
    const record = this.#threads.get(threadId);
    const kept = version === null ? record?.head : record?.versions.get(version);
    if (!record || !kept) return [];
    const seqs = rangeSeqs(sliceRanges(kept.transcript, offset, limit));
    return jsonCopy(seqs.map((seq) => record.rows.get(seq)!));
  }

  protected async loadVersion(threadId: string, version: number): Promise<ThreadCheckpoint | null> {
    const kept = this.#threads.get(threadId)?.versions.get(version);
    return kept ? jsonCopy(kept.checkpoint) : null;
  }

  protected async loadVersions(
    threadId: string,
    { limit, before }: VersionRange,
  ): Promise<ThreadCheckpoint[]> {
    const versions = [...(this.#threads.get(threadId)?.versions.values() ?? [])]
      .map((kept) => kept.checkpoint)
      .filter((checkpoint) => before === null || checkpoint.version < before)
      .sort((a, b) => b.version - a.version);
    return jsonCopy(versions.slice(0, limit ?? undefined));
  }

  protected async removeVersions(threadId: string, keepLast: number): Promise<number> {
    const record = this.#threads.get(threadId);
    if (!record) return 0;
    const newestFirst = [...record.versions.keys()].sort((a, b) => b - a);
    const dropped = newestFirst.slice(keepLast);
    for (const version of dropped) record.versions.delete(version);
    const held = seqsHeldByAny([...record.versions.values()].map((kept) => kept.transcript));
    for (const seq of record.rows.keys()) if (!held.has(seq)) record.rows.delete(seq);
    return dropped.length;
  }

  protected async saveDeleteAfter(threadId: string, at: string | null): Promise<boolean> {
    const record = this.#threads.get(threadId);
    if (!record) return false;
    record.deleteAfter = at;
    return true;
  }

  protected async loadExpiredThreads(now: string): Promise<string[]> {
    const expired = [...this.#threads.entries()].filter(
      ([, record]) =>
        record.deleteAfter !== null && Date.parse(record.deleteAfter) <= Date.parse(now),
    );
    return expired.map(([threadId]) => threadId);
  }

  protected async loadThreads(filter: ThreadFilter): Promise<ThreadSummary[]> {
    const { userId, parentThreadId, offset, limit } = filter;
    return (
      [...this.#threads.values()]
        .filter((record) => record.parentThreadId === parentThreadId)
        .filter((record) => userId === undefined || record.head.checkpoint.userId === userId)
        // The write counter is the order writes happened in, even within one clock tick.
        .sort((a, b) => b.writeSeq - a.writeSeq)
        .slice(offset, limit === null ? undefined : offset + limit)
        .map((record) => summarize(record))
    );
  }

  /** No await between the reads and the deletes: the thread and its descendants go as one. */
  protected async removeThread(threadId: string): Promise<string[]> {
    const doomed = this.#threads.has(threadId) ? [threadId, ...this.#descendantsOf(threadId)] : [];
    for (const id of doomed) {
      this.#threads.delete(id);
      this.#ledgers.delete(id);
      this.#stops.delete(id);
    }
    // A stop may be requested before a thread's first write, so its count goes even without one.
    this.#stops.delete(threadId);
    return doomed;
  }

  /**
   * Children, their children and so on, by the parent each recorded at its creation. Each
   * thread is taken once: a parent named before it existed could close a loop.
   */
  #descendantsOf(threadId: string): string[] {
    const found = new Set([threadId]);
    for (let parents = found; parents.size > 0;) {
      const children = [...this.#threads.entries()]
        .filter(([id, { parentThreadId }]) => !found.has(id) && isIn(parents, parentThreadId))
        .map(([id]) => id);
      parents = new Set(children);
      for (const id of children) found.add(id);
    }
    found.delete(threadId);
    return [...found];
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
      // Field by field, in the started entry's order: a rest and a spread made a new hidden
      // class per entry (microseconds each on Node 20, and kept as long as the entry).
      (held) => ({
        key: held.key,
        toolName: held.toolName,
        attempt: held.attempt,
        ownerRunId: held.ownerRunId,
        startedAt: held.startedAt,
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
    return Object.assign(copy, { leaseExpiresInMs });
  }

  #now(): string {
    return this.#clock().toISOString();
  }
}

function isIn(ids: ReadonlySet<string>, id: string | null): boolean {
  return id !== null && ids.has(id);
}

function summarize(record: ThreadRecord): ThreadSummary {
  const { threadId, userId, status, version, updatedAt } = record.head.checkpoint;
  return { threadId, parentThreadId: record.parentThreadId, userId, status, version, updatedAt };
}

/**
 * Checks a write's transcript change against its parent's message ids: an appended id must be
 * new to it, a replaced or removed one must be in it. Returns the rows it removes.
 */
function transcriptChange(
  threadId: string,
  parentIds: ReadonlyMap<string, number>,
  write: StoreWrite,
): { removedSeqs: Set<number>; plainAppend: boolean } {
  const fail = (why: string) => new StorageError("putCheckpoint", new Error(why));
  for (const { id } of write.newMessages) {
    if (parentIds.has(id)) {
      throw fail(`message '${id}' is already in the append-only transcript of '${threadId}'`);
    }
  }
  const seqOf = (id: string, change: string) => {
    const seq = parentIds.get(id);
    if (seq === undefined) {
      throw fail(
        `cannot ${change} message '${id}': it is not in the transcript of version ${write.parentVersion} of '${threadId}'`,
      );
    }
    return seq;
  };
  for (const { id } of write.replacedMessages) seqOf(id, "replace");
  const removedSeqs = new Set(write.removedMessageIds.map((id) => seqOf(id, "remove")));
  const plainAppend = write.replacedMessages.length === 0 && removedSeqs.size === 0;
  return { removedSeqs, plainAppend };
}

/** The ids of a transcript's messages, with their rows. */
function idsOf(rows: ReadonlyMap<number, Message>, transcript: SeqRanges): Map<string, number> {
  return new Map(rangeSeqs(transcript).map((seq) => [rows.get(seq)!.id, seq]));
}

/**
 * `ids` grown by the rows appended from `first`, in place: they are the parent's, which no
 * later write reads again (it was the head, now moved on, or read for this write alone).
 */
function appendIds(
  ids: Map<string, number>,
  appended: readonly Message[],
  first: number,
): Map<string, number> {
  appended.forEach((message, i) => ids.set(message.id, first + i));
  return ids;
}
