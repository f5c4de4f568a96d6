import type { Message } from "../messages/message.js";
import type { CheckpointRecord } from "./checkpoint-record.js";
import type { AttemptRef, ClaimResult, LedgerClaim, LedgerEntry } from "./ledger-entry.js";

// The runtime's fields and their types live with their codec, the one place that names them.
export type {
  CheckpointRecord,
  Frontier,
  FrontierTask,
  GraphVersion,
  Interrupt,
} from "./checkpoint-record.js";

/** Where a thread stands. `running` is also what a crashed run leaves behind. */
export type ThreadStatus = "running" | "completed" | "interrupted" | "stopped" | "failed";

/**
 * What a write sets and a read returns, shared by {@link ThreadCheckpoint} and
 * {@link CheckpointWrite}: the columns a store queries or indexes, and the runtime's record.
 */
interface CheckpointFields extends CheckpointRecord {
  threadId: string;
  /**
   * This life of the thread: minted by the write that creates the thread (a fresh id, never a
   * former one's), carried unchanged by every later write. A write whose incarnation is not the
   * thread's is stale, so a run still going on a deleted thread can never write into a new
   * thread of the same id, even one that reached the same version.
   */
  incarnation: string;
  /**
   * The thread's owner, set by the write that creates the thread and never changed: a later
   * write passes the same user or `null` (keep it); another user is refused (`ThreadOwnerError`).
   */
  userId: string | null;
  status: ThreadStatus;
}

/**
 * A committed version of a thread, without its transcript: the latest (`getCheckpoint`) or any
 * version the store still keeps (`getVersion`, `listVersions`).
 */
export interface ThreadCheckpoint extends CheckpointFields {
  /** Increases by one with every committed write; 0 means the thread does not exist. */
  version: number;
  /**
   * The version this one was computed from: the one before it, or an earlier one for a fork.
   * `null` for the version that created the thread.
   */
  parentVersion: number | null;
  /** The node whose step wrote this version; `null` for a write outside a node (a run's input). */
  node: string | null;
  /** The run that wrote this version; `null` for a write outside a run (an edit). */
  runId: string | null;
  /** Messages in this version's transcript. */
  messageCount: number;
  /** ISO-8601 time of the write. */
  updatedAt: string;
  /**
   * The thread this one is a child of (a subgraph's thread), as its first write recorded it;
   * `null` for a top-level thread. The same in every version of the thread.
   */
  parentThreadId: string | null;
}

/**
 * One versioned write: the new checkpoint plus how its transcript differs from its parent's.
 *
 * Transcripts are append-only tables that are never rewritten: a version names the messages it
 * holds, and shares them with the versions before it. Its transcript is its parent's (the
 * version `parentVersion`, by default `expectedVersion`), without `removedMessageIds`, with
 * each of `replacedMessages` in the place of the message of the same id, then `newMessages`.
 * The parent's transcript stays readable as it was.
 */
export interface CheckpointWrite extends CheckpointFields {
  /** The version this write was computed from; 0 to create the thread. */
  expectedVersion: number;
  /**
   * The version whose transcript this write continues: `expectedVersion` (the default), or an
   * earlier version the store still keeps, which makes the write a fork of that version. The
   * compare-and-swap is on `expectedVersion` either way.
   */
  parentVersion?: number;
  /** The node whose step made the write; `null` (the default) outside a node. */
  node?: string | null;
  /** The run that made the write; `null` (the default) outside a run. */
  runId?: string | null;
  /** Appended to the transcript in order, in the same transaction as the checkpoint. */
  newMessages: Message[];
  /** New bodies for messages of the parent's transcript, each keeping its id and its place. */
  replacedMessages?: Message[];
  /** Ids of messages of the parent's transcript that this version no longer holds. */
  removedMessageIds?: string[];
  /**
   * The thread this one is a child of: a subgraph's run sets it on its thread's first write
   * (`expectedVersion` 0). The store records it with the thread; later writes may carry it and
   * change nothing. A child is listed only under its parent and deleted with it (see
   * `listThreads` and `deleteThread`). `null` or absent: a top-level thread.
   */
  parentThreadId?: string | null;
}

/** A page of a thread's versions, newest first. */
export interface VersionPage {
  /** At most this many versions (default: all). */
  limit?: number;
  /** Only versions older than this one (default: from the latest). */
  before?: number;
}

/**
 * One versioned write plus the tool-ledger writes that commit in its transaction (ledger
 * protocol v2, see `model/README.md`): the step's last result rides in the step's own write,
 * and the claims of the next node's `retry` calls ride in the write of the step that issued
 * them. Either way the turn saves a commit without moving any guarantee.
 */
export interface StepWrite extends CheckpointWrite {
  ledger: StepLedgerWrites;
}

/** Ledger writes that commit with a checkpoint, or not at all. */
export interface StepLedgerWrites {
  /**
   * Results recorded in the write, each fenced on its attempt as `completeCall` is: when an
   * entry is not `started` at exactly that attempt (another execution took the call over), the
   * whole write fails with `ClaimLostError` (`TOOL_CONFLICT_002`) and nothing of it is written.
   */
  completions: readonly LedgerCompletion[];
  /**
   * Claims of calls the next node will make, each inserted only where its key has no entry
   * (`expectedAttempt` must be 0). A key that has an entry keeps it untouched: that claim is
   * lost, and the caller claims the call the usual way when its node runs.
   */
  claims: readonly LedgerClaim[];
}

/** One result recorded with a checkpoint. */
export interface LedgerCompletion {
  attempt: AttemptRef;
  /** The recorded envelope, as `completeCall` takes it. Plain JSON. */
  result: unknown;
}

/** What a step write committed: the new version, and the outcome of each riding claim in order. */
export interface StepCommit {
  version: number;
  claims: ClaimResult[];
}

/** A thread's latest checkpoint and its stop-request count, read at once (`getCheckpointAndStops`). */
export interface CheckpointRead {
  /** `null`: the thread does not exist (it may still have stop requests). */
  checkpoint: ThreadCheckpoint | null;
  stopRequests: number;
}

/** A thread in a listing. */
export interface ThreadSummary {
  threadId: string;
  /** The thread this one is a child of (a subgraph's thread); `null` for a top-level thread. */
  parentThreadId: string | null;
  userId: string | null;
  status: ThreadStatus;
  version: number;
  updatedAt: string;
}

/**
 * The storage contract every checkpointer implements (in-memory, SQLite, PostgreSQL) and the
 * conformance suite in `@tenxgraph/core/testing` checks. Implementations translate their engine's
 * failures into tenxgraph errors and never return partially applied writes.
 */
export interface Checkpointer {
  /** Creates or migrates the schema. Idempotent; also run on first use. */
  setup(): Promise<void>;
  /** Releases connections so the process can exit. Further calls fail. */
  close(): Promise<void>;

  // Threads and state.
  /** The latest checkpoint, or `null` when the thread does not exist. */
  getCheckpoint(threadId: string): Promise<ThreadCheckpoint | null>;
  /**
   * `getCheckpoint` and `countStopRequests` in one read: what a run starts from, and the count
   * past which a stop request is meant for it. A store answers both in one round trip.
   */
  getCheckpointAndStops(threadId: string): Promise<CheckpointRead>;
  /**
   * Commits `write` as version `expectedVersion + 1`, appending `newMessages`, atomically.
   * Throws `StaleStateError` when the thread's version is not `expectedVersion` or its
   * incarnation is not the write's (for `expectedVersion` 0: when the thread exists), then
   * `ThreadOwnerError` when the write names a user other than the thread's owner; either writes
   * nothing. Returns the new version.
   */
  putCheckpoint(write: CheckpointWrite): Promise<number>;
  /**
   * `putCheckpoint` with ledger writes in the same transaction (see {@link StepWrite}). The
   * version is compared first (`StaleStateError`), then every completion's attempt
   * (`ClaimLostError`); either failure writes nothing. Optional: without it the runtime records
   * each result and claims each call on its own, as ledger protocol v1 did.
   */
  commitStep?(write: StepWrite): Promise<StepCommit>;
  /**
   * Messages of the latest version's transcript (or of `version`'s) in order, from index
   * `offset` (default 0), at most `limit`. A version the store no longer keeps lists none.
   */
  listMessages(
    threadId: string,
    page?: { offset?: number; limit?: number; version?: number },
  ): Promise<Message[]>;

  // History: every committed version stays readable until it is pruned.
  /** The version `version` of the thread, or `null` when it does not exist or was pruned. */
  getVersion(threadId: string, version: number): Promise<ThreadCheckpoint | null>;
  /** The thread's kept versions, newest first (`[]` for an unknown thread). */
  listVersions(threadId: string, page?: VersionPage): Promise<ThreadCheckpoint[]>;
  /**
   * Deletes every version but the newest `keepLast` (at least 1: the latest is always kept),
   * and the messages no kept version holds. Returns how many versions it deleted.
   */
  pruneVersions(threadId: string, options: { keepLast: number }): Promise<number>;
  /**
   * Sets (or, with `null`, clears) the time after which the thread may be deleted by
   * `deleteExpiredThreads`. Returns `false` when the thread does not exist.
   */
  setDeleteAfter(threadId: string, at: Date | null): Promise<boolean>;
  /**
   * Deletes, as `deleteThread` does (descendants included), every thread whose delete-after time
   * has passed. Returns the id of every thread it deleted, descendants among them.
   */
  deleteExpiredThreads(): Promise<string[]>;
  /**
   * Top-level threads (those written without `parentThreadId`), most recently active first:
   * ordered by the last write that created the thread or changed its `status` (a run starting,
   * pausing or ending), not by every step, so a store can write a step without touching the
   * listing's index. `updatedAt` is still the last write's. With `parentThreadId`, the direct
   * children of that thread instead (a subgraph's threads), in the same order.
   */
  listThreads(filter?: {
    userId?: string;
    parentThreadId?: string;
    limit?: number;
    offset?: number;
  }): Promise<ThreadSummary[]>;
  /**
   * Deletes the thread with its checkpoints, messages, ledger and stop request, and every
   * descendant (its children, theirs, and so on, as recorded by `parentThreadId`) with all of
   * theirs, in one transaction. A thread whose id merely starts with this one's is not a
   * descendant. Deleting a child leaves its parent.
   */
  deleteThread(threadId: string): Promise<void>;
  /**
   * Copies the thread to the new thread `toThreadId`, in one transaction: every kept version
   * (same numbers, nodes, runs, times and records) with its transcript, and the tool ledger, so
   * a run on the copy replays each recorded call instead of running its tool again. The copy is
   * a new life (its own incarnation), has the source's owner, no parent, no stop requests and no
   * delete-after time, and is listed as just created. Writing to either thread never changes
   * the other. Refused with `ThreadCopyError` (`THREAD_008`), writing nothing, when the thread
   * does not exist, `toThreadId` does, the thread is a subgraph's or has subgraph threads, its
   * status is `running`, or a call of its ledger is `started` (in doubt). Returns the copy's
   * latest version.
   */
  copyThread(fromThreadId: string, toThreadId: string): Promise<ThreadCheckpoint>;

  // Stop requests, visible to every process that shares the store. They are counted, never
  // cleared: a run notes the count when it starts and stops when it grows, so a request meant
  // for a running run cannot be erased by another caller, nor stop a run that starts later.
  requestStop(threadId: string): Promise<void>;
  /** How many stop requests were made for the thread (0 for an unknown thread). */
  countStopRequests(threadId: string): Promise<number>;

  // The tool ledger.
  /**
   * The entries for `keys` that exist, in any order. Every started entry read from the ledger
   * (here, in lost claims and in `listCalls`) carries its lease: `leaseExpiresAt`, and
   * `leaseExpiresInMs` measured at the read by the store's own clock (negative once expired), so
   * workers whose clocks or settings disagree still agree on which claims are abandoned.
   */
  getCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]>;
  /**
   * Claims calls in one transaction; each claim is won by exactly one caller. A won claim is
   * `started` with its lease expiring `leaseMs` after the claim, by the store's clock.
   */
  claimCalls(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]>;
  /**
   * Records `result` for the attempt that claimed the call. Fenced: returns `false` and writes
   * nothing unless the entry is `started` with exactly this attempt.
   */
  completeCall(threadId: string, attempt: AttemptRef, result: unknown): Promise<boolean>;
  /** Marks a claimed call `interrupted` (paused, not done). Fenced like `completeCall`. */
  releaseCall(threadId: string, attempt: AttemptRef): Promise<boolean>;
  /**
   * Renews the claims still held by these attempts (started, at exactly that attempt): sets
   * `heartbeatAt` to now and the lease to expire `leaseMs` from now, by the store's clock.
   * Returns the attempts it did not renew, because their entry is gone, no longer started, or
   * taken over by a later attempt: their claimant must stop acting on them.
   */
  heartbeatCalls(threadId: string, attempts: AttemptRef[], leaseMs: number): Promise<AttemptRef[]>;
  /** Every entry of the thread, oldest claim first. */
  listCalls(threadId: string): Promise<LedgerEntry[]>;

  // Optional: a cache for the steps of runs with `durableCheckpointEveryStep: false`. A store
  // without one (in-memory, SQLite) writes nothing between a run's terminal points.
  /**
   * Keeps `write` (computed from durable version `expectedVersion`, carrying every message the
   * durable transcript lacks) in the cache instead of the durable store. Returns `false` when the
   * cache could not take it: the run then writes the step durably, so nothing is lost.
   */
  cacheStep?(write: CheckpointWrite): Promise<boolean>;
  /**
   * The last step cached for the thread, or `null`. It counts only while the thread's durable
   * version is still its `expectedVersion`: a later durable write supersedes it.
   */
  getCachedStep?(threadId: string): Promise<CheckpointWrite | null>;
}
