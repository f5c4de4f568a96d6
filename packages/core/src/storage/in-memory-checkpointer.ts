import {
  ClaimLostError,
  StaleStateError,
  StorageError,
  ThreadOwnerError,
} from "../errors/errors.js";
import type { AttemptRef, ClaimResult, LedgerClaim, LedgerEntry } from "./ledger-entry.js";
import type { Message } from "../messages/message.js";
import {
  BaseCheckpointer,
  type HistoryOptions,
  type MessagePage,
  type StoreWrite,
  type ThreadFilter,
  type VersionRange,
} from "./base-checkpointer.js";
import { decodeCheckpointRecord, type EncodedCheckpointRecord } from "./checkpoint-record.js";
import type {
  CheckpointRecord,
  StepCommit,
  ThreadCheckpoint,
  ThreadSummary,
} from "./checkpointer.js";
import { InMemoryLedger } from "./in-memory-ledger.js";
import { appendIds, idsOf, transcriptChange } from "./in-memory-transcript.js";
import { jsonCopy } from "./json-copy.js";
import { copyRefusal, ThreadCopyError } from "./thread-copy.js";
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

/** A version's columns: the fields of its checkpoint a store reads, as the SQL stores keep them. */
type VersionColumns = Omit<ThreadCheckpoint, keyof CheckpointRecord>;

/**
 * A kept version: its columns, the runtime's record kept whole (as the SQL stores keep it, see
 * checkpoint-record.ts), and the message rows its transcript holds.
 */
interface StoredVersion {
  checkpoint: VersionColumns;
  record: EncodedCheckpointRecord;
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
  readonly #ledger: InMemoryLedger;
  /** Stop requests made per thread: counted, never cleared (see `Checkpointer`). */
  readonly #stops = new Map<string, number>();
  #writeSeq = 0;

  constructor(options: InMemoryCheckpointerOptions = {}) {
    super(options);
    this.#clock = options.clock ?? (() => new Date());
    this.#ledger = new InMemoryLedger(this.#clock);
  }

  /** Nothing to open: the maps exist from the start. */
  protected async open(): Promise<void> {}

  /** Nothing to release; the threads stay readable to no one, as after a process exit. */
  protected async shutdown(): Promise<void> {}

  protected async loadCheckpoint(threadId: string): Promise<ThreadCheckpoint | null> {
    const record = this.#threads.get(threadId);
    return record ? readVersion(record.head) : null;
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
      if (!this.#ledger.holds(threadId, attempt)) {
        throw new ClaimLostError(threadId, attempt.key, attempt.attempt);
      }
    }
    const parent = this.#parentOf(previous, write);
    const parentIds = parent.ids;
    const change = transcriptChange(threadId, parentIds, write);
    // Copy before changing anything: a value JSON rejects must not leave half a write.
    const copy = jsonCopy({
      record: write.record,
      newMessages: write.newMessages,
      replacedMessages: write.replacedMessages,
      ledger: write.ledger,
    });
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
    const checkpoint: VersionColumns = {
      threadId,
      incarnation: write.incarnation,
      userId: previous ? owner : write.userId,
      version: expectedVersion + 1,
      parentVersion: write.parentVersion === 0 ? null : write.parentVersion,
      node: write.node,
      runId: write.runId,
      status: write.status,
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
    record.head = { checkpoint, record: copy.record, transcript };
    record.versions.set(checkpoint.version, record.head);
    if (this.keepVersions !== null) {
      for (const version of record.versions.keys()) {
        if (version <= checkpoint.version - this.keepVersions) record.versions.delete(version);
      }
    }
    this.#threads.set(threadId, record);
    // No await since the checks above: the thread and its ledger change as one.
    for (const { attempt, result } of copy.ledger.completions) {
      this.#ledger.complete(threadId, attempt, result, true);
    }
    const claims = this.#ledger.claimAll(threadId, copy.ledger.claims);
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
    return kept ? readVersion(kept) : null;
  }

  protected async loadVersions(
    threadId: string,
    { limit, before }: VersionRange,
  ): Promise<ThreadCheckpoint[]> {
    const versions = [...(this.#threads.get(threadId)?.versions.values() ?? [])]
      .filter((kept) => before === null || kept.checkpoint.version < before)
      .sort((a, b) => b.checkpoint.version - a.checkpoint.version);
    return versions.slice(0, limit ?? undefined).map(readVersion);
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
      this.#ledger.delete(id);
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

  /** No await: the reads `copyRefusal` decides on and the copy happen as one. */
  protected async copyStoredThread(from: string, to: string, incarnation: string) {
    const source = this.#threads.get(from);
    const children = [...this.#threads.values()].filter((r) => r.parentThreadId === from);
    const refusal = copyRefusal({
      head: source ? summarize(source) : null,
      targetExists: this.#threads.has(to),
      childThreadIds: children.map((child) => child.head.checkpoint.threadId),
      startedKeys: this.#ledger.startedKeys(from),
    });
    if (refusal !== null || !source) throw new ThreadCopyError(from, to, refusal!);
    const versions = new Map<number, StoredVersion>(
      jsonCopy([...source.versions]).map(([version, kept]) => {
        const checkpoint = { ...kept.checkpoint, threadId: to, incarnation };
        return [version, { ...kept, checkpoint }];
      }),
    );
    const head = versions.get(source.head.checkpoint.version)!;
    const rows = new Map(jsonCopy([...source.rows]));
    const headIds = new Map(source.headIds);
    const writeSeq = ++this.#writeSeq;
    const copy = { ...source, head, versions, rows, headIds, writeSeq, deleteAfter: null };
    this.#threads.set(to, copy);
    this.#ledger.copy(from, to);
    return readVersion(head);
  }

  protected async addStopRequest(threadId: string): Promise<void> {
    this.#stops.set(threadId, (this.#stops.get(threadId) ?? 0) + 1);
  }

  protected async loadStopRequests(threadId: string): Promise<number> {
    return this.#stops.get(threadId) ?? 0;
  }

  protected async loadCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    return this.#ledger.get(threadId, keys);
  }

  protected async insertClaims(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]> {
    return this.#ledger.claimAll(threadId, claims);
  }

  protected async recordCompletion(
    threadId: string,
    attempt: AttemptRef,
    result: unknown,
  ): Promise<boolean> {
    return this.#ledger.complete(threadId, attempt, result);
  }

  protected async recordRelease(threadId: string, attempt: AttemptRef): Promise<boolean> {
    return this.#ledger.release(threadId, attempt);
  }

  protected async renewClaims(
    threadId: string,
    attempts: AttemptRef[],
    leaseMs: number,
  ): Promise<AttemptRef[]> {
    return this.#ledger.renew(threadId, attempts, leaseMs);
  }

  protected async loadAllCalls(threadId: string): Promise<LedgerEntry[]> {
    return this.#ledger.list(threadId);
  }

  #now(): string {
    return this.#clock().toISOString();
  }
}

/** A kept version as a read returns it: a copy no caller can change the store through. */
function readVersion(kept: StoredVersion): ThreadCheckpoint {
  return jsonCopy({ ...kept.checkpoint, ...decodeCheckpointRecord(kept.record) });
}

function isIn(ids: ReadonlySet<string>, id: string | null): boolean {
  return id !== null && ids.has(id);
}

function summarize(record: ThreadRecord): ThreadSummary {
  const { threadId, userId, status, version, updatedAt } = record.head.checkpoint;
  return { threadId, parentThreadId: record.parentThreadId, userId, status, version, updatedAt };
}
