import type { SeqRanges, StepCommit, StoreWrite } from "@tenxgraph/core/storage";
import {
  StaleStateError,
  StorageError,
  ThreadOwnerError,
  childRanges,
  isPrefix,
  rangesLength,
} from "@tenxgraph/core/storage";
import type { EncodedCompletion, SqliteLedger } from "./ledger.js";
import { toTranscript } from "./rows.js";
import type { TranscriptRow } from "./rows.js";
import type { Statements } from "./sql.js";
import type { WrittenHead } from "./written-heads.js";

/** A message as a row stores it. */
interface EncodedMessage {
  id: string;
  json: string;
}

/** A write's JSON, encoded before its transaction. */
export interface EncodedWrite {
  /** The runtime's record (see `encodeCheckpointRecord`), kept whole. */
  recordJson: string;
  replaced: EncodedMessage[];
  appended: EncodedMessage[];
  completions: EncodedCompletion[];
}

/** The write's JSON: a value JSON cannot hold fails here, before the file is touched. */
export function encodeWrite(write: StoreWrite): EncodedWrite {
  const encode = (messages: StoreWrite["newMessages"]) =>
    messages.map((message) => ({ id: message.id, json: JSON.stringify(message) }));
  return {
    recordJson: JSON.stringify(write.record),
    replaced: encode(write.replacedMessages),
    appended: encode(write.newMessages),
    completions: write.ledger.completions.map(({ attempt, result }) => ({
      key: attempt.key,
      attempt: attempt.attempt,
      resultJson: JSON.stringify(result) ?? "null",
    })),
  };
}

/**
 * The body of the step write's transaction: read the parent's transcript (unless this
 * connection wrote the head the write continues: `head`), compare-and-swap the thread, check
 * the transcript change against the parent, record the riding results (each fenced on its
 * attempt), write the message rows and the state, drop the versions `keepVersions` pushed out,
 * then insert the riding claims. A throw anywhere rolls all of it back, so a refused write
 * writes nothing. An empty ledger runs no statement of its own. Returns the commit and the new
 * head, for the next write of the thread once this one committed.
 */
export function commitWrite(
  sql: Statements,
  ledger: SqliteLedger,
  write: StoreWrite,
  encoded: EncodedWrite,
  options: { keepVersions: number | null; head: WrittenHead | undefined },
): { commit: StepCommit; head: WrittenHead } {
  const { threadId, expectedVersion } = write;
  const { keepVersions, head } = options;
  const now = new Date();
  const at = now.toISOString();
  const parent = head ? head.transcript : parentTranscript(sql, write);
  // Exact once the change is checked below (removed ids are distinct and, then, in the parent).
  const messageCount =
    rangesLength(parent) - write.removedMessageIds.length + write.newMessages.length;
  const rowsAdded = encoded.replaced.length + encoded.appended.length;
  const firstSeq = moveThread(sql, write, { messageCount, rowsAdded, now: at }, head?.status);
  const transcript = changedTranscript(sql, write, parent, firstSeq);
  // A completion's update is its own fence: it changes no row unless the attempt still holds
  // the claim, and then ClaimLostError undoes the version just taken.
  ledger.completeInStep(threadId, encoded.completions, at);
  // The replacing rows take the first new places, then the appended ones, as childRanges expects.
  let seq = firstSeq;
  for (const message of encoded.replaced) {
    sql.insertMessage.run(threadId, seq++, message.id, message.json);
  }
  for (const message of encoded.appended) {
    sql.insertMessage.run(threadId, seq++, message.id, message.json);
  }
  const version = expectedVersion + 1;
  insertState(sql, write, encoded, { version, transcript, now: at });
  if (keepVersions !== null) sql.deleteStatesUpTo.run(threadId, version - keepVersions);
  const claims = ledger.claimInStep(threadId, write.ledger.claims, now);
  const written = { incarnation: write.incarnation, version, status: write.status, transcript };
  return { commit: { version, claims }, head: written };
}

/**
 * The transcript of the version the write continues, read from the file (empty for a new
 * thread). A version that is not kept, or was written before the upgrade to history, cannot be
 * continued: the write fails, as stale when the thread moved on (that is the error its caller
 * can act on).
 */
function parentTranscript(sql: Statements, write: StoreWrite): SeqRanges {
  const { threadId, parentVersion } = write;
  if (parentVersion === 0) return [];
  const row = sql.selectTranscript.get({ threadId, version: parentVersion });
  const transcript = toTranscript(row as TranscriptRow | undefined);
  if (transcript) return transcript;
  requireCurrent(sql, write);
  const why =
    `version ${parentVersion} of thread '${threadId}' is not kept (pruned, never written, or ` +
    `written before the upgrade to history): it cannot be continued`;
  throw new StorageError("putCheckpoint", new Error(why));
}

/** Throws `StaleStateError` unless the thread is at the write's version, in the write's life. */
function requireCurrent(sql: Statements, write: StoreWrite): void {
  const { threadId, expectedVersion } = write;
  const thread = sql.selectVersion.get(threadId) as ThreadVersionRow | undefined;
  const current = thread?.version === expectedVersion && thread.incarnation === write.incarnation;
  if (!current) throw new StaleStateError(threadId, expectedVersion, thread?.version ?? null);
}

interface ThreadVersionRow {
  version: number;
  incarnation: string;
}

/**
 * Creates the thread or moves it one version on, with the new head's transcript length and
 * `rowsAdded` more message rows; returns the place of the first new row. `headStatus` is the
 * status of the head the write continues when this connection wrote it. Throws
 * `StaleStateError` when the thread is not at the write's version (of the write's life), and
 * `ThreadOwnerError` when the write names a user other than the thread's owner.
 */
function moveThread(
  sql: Statements,
  write: StoreWrite,
  change: { messageCount: number; rowsAdded: number; now: string },
  headStatus: string | undefined,
): number {
  const { threadId, expectedVersion } = write;
  const firstSeq =
    expectedVersion === 0
      ? createThread(sql, write, change)
      : advanceThread(sql, write, change, headStatus);
  if (firstSeq === null) {
    const actual = sql.selectVersion.get(threadId) as ThreadVersionRow | undefined;
    // At the write's version and life, the thread's owner is what refused it.
    const current =
      expectedVersion !== 0 &&
      actual?.version === expectedVersion &&
      actual.incarnation === write.incarnation;
    if (current && write.userId !== null) throw new ThreadOwnerError(threadId, write.userId);
    throw new StaleStateError(threadId, expectedVersion, actual?.version ?? null);
  }
  return firstSeq;
}

/**
 * Inserts the thread at version 1, recording its parent (a subgraph's thread); the first row's
 * place (0), or `null` if it exists.
 */
function createThread(
  sql: Statements,
  write: StoreWrite,
  change: { messageCount: number; rowsAdded: number; now: string },
): number | null {
  const inserted = sql.insertThread.run({
    threadId: write.threadId,
    incarnation: write.incarnation,
    parentThreadId: write.parentThreadId,
    userId: write.userId,
    status: write.status,
    ...change,
  });
  return inserted.changes === 1 ? 0 : null;
}

/**
 * Moves the thread one version on; the first new row's place, or `null` when stale. A step
 * that keeps the status takes one statement. So does a status change when this connection
 * wrote the head (`headStatus`: then the compare-and-swap matches only that head, whose status
 * is known); otherwise a status change, or a stale write, takes two.
 */
function advanceThread(
  sql: Statements,
  write: StoreWrite,
  change: { messageCount: number; rowsAdded: number; now: string },
  headStatus: string | undefined,
): number | null {
  const { threadId, incarnation, userId, status, expectedVersion } = write;
  const params = { threadId, incarnation, userId, status, expectedVersion, ...change };
  type Moved = { first_seq: number } | undefined;
  const row = (
    headStatus === undefined
      ? (sql.advanceThread.get(params) ?? sql.advanceThreadRelisted.get(params))
      : headStatus === status
        ? sql.advanceThread.get(params)
        : sql.advanceThreadRelisted.get(params)
  ) as Moved;
  return row?.first_seq ?? null;
}

/**
 * The new version's transcript: the parent's, changed as the write says, its new rows from
 * `firstSeq`. Each appended id must be new to the parent's transcript, each replaced or removed
 * one in it; ids are found through the `messages_by_id` index, and a row found counts only if
 * the parent holds it (the same id may sit in rows of an abandoned branch, or of an earlier
 * edit).
 */
function changedTranscript(
  sql: Statements,
  write: StoreWrite,
  parent: SeqRanges,
  firstSeq: number,
): SeqRanges {
  const { threadId, newMessages, replacedMessages, removedMessageIds } = write;
  const inParent = parentRowsOf(sql, write, parent);
  const fail = (why: string) => new StorageError("putCheckpoint", new Error(why));
  for (const { id } of newMessages) {
    if (inParent.has(id)) {
      throw fail(`message '${id}' is already in the append-only transcript of '${threadId}'`);
    }
  }
  const seqOf = (id: string, change: string) => {
    const seq = inParent.get(id);
    if (seq === undefined) {
      throw fail(
        `cannot ${change} message '${id}': it is not in the transcript of version ${write.parentVersion} of '${threadId}'`,
      );
    }
    return seq;
  };
  const replaced = new Map(
    replacedMessages.map(({ id }, index) => [seqOf(id, "replace"), firstSeq + index]),
  );
  const removed = new Set(removedMessageIds.map((id) => seqOf(id, "remove")));
  const appended = { first: firstSeq + replacedMessages.length, count: newMessages.length };
  return childRanges(parent, { removed, replaced, appended });
}

/**
 * The write's message ids that the parent's transcript holds, with their rows: one lookup per
 * id (cheaper than one statement over a JSON array of them, which SQLite must parse and index).
 */
function parentRowsOf(sql: Statements, write: StoreWrite, parent: SeqRanges): Map<string, number> {
  const held = new Map<string, number>();
  // A new thread has nothing to look up.
  if (parent.length === 0) return held;
  const lookUp = (id: string) => {
    for (const { seq } of sql.selectMessageSeqs.all(write.threadId, id) as { seq: number }[]) {
      if (parent.some(([start, end]) => seq >= start && seq < end)) held.set(id, seq);
    }
  };
  for (const { id } of write.newMessages) lookUp(id);
  for (const { id } of write.replacedMessages) lookUp(id);
  for (const id of write.removedMessageIds) lookUp(id);
  return held;
}

/**
 * Inserts the version's state row. A transcript that is the prefix `[0, n)`, as every version
 * of a thread that only appends, is kept as its length alone (`message_ranges` NULL).
 */
function insertState(
  sql: Statements,
  write: StoreWrite,
  encoded: EncodedWrite,
  at: { version: number; transcript: SeqRanges; now: string },
): void {
  const { transcript } = at;
  sql.insertState.run({
    threadId: write.threadId,
    version: at.version,
    parentVersion: write.parentVersion === 0 ? null : write.parentVersion,
    node: write.node,
    runId: write.runId,
    status: write.status,
    recordJson: encoded.recordJson,
    messageCount: rangesLength(transcript),
    messageRanges: isPrefix(transcript) ? null : JSON.stringify(transcript),
    now: at.now,
  });
}
