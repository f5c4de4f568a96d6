import { StorageError } from "../errors/errors.js";
import type { Message } from "../messages/message.js";
import { encodeCheckpointRecord, type EncodedCheckpointRecord } from "./checkpoint-record.js";
import type {
  CheckpointRecord,
  CheckpointWrite,
  StepLedgerWrites,
  StepWrite,
} from "./checkpointer.js";
import { requireId, requireThreadId, requireUserId } from "./store-checks.js";
import { requireWellFormed } from "./well-formed.js";

/**
 * A write as a store's `commitCheckpoint` gets it: checked, with every optional field of
 * {@link CheckpointWrite} filled in (`parentVersion` is `expectedVersion` unless it forks), and
 * the runtime's fields encoded as the one `record` a store keeps whole without looking inside.
 */
export interface StoreWrite extends Omit<StepWrite, keyof CheckpointRecord> {
  parentVersion: number;
  node: string | null;
  runId: string | null;
  replacedMessages: Message[];
  removedMessageIds: string[];
  /** Read only when the write creates the thread (`expectedVersion` 0). */
  parentThreadId: string | null;
  /** The runtime's fields (`encodeCheckpointRecord`): stored whole, read back with `decodeCheckpointRecord`. */
  record: EncodedCheckpointRecord;
}

/**
 * `write` checked and completed as {@link StoreWrite} says: well-formed ids, a transcript change
 * a store can apply, a parent version the write can continue. Throws `StorageError` otherwise.
 */
export function completeWrite(operation: string, write: StepWrite): StoreWrite {
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
  return {
    ...write,
    // Absent is no user, as null: the write keeps the thread's owner.
    userId: userId ?? null,
    parentVersion,
    node: write.node ?? null,
    runId: write.runId ?? null,
    replacedMessages: write.replacedMessages ?? [],
    removedMessageIds: write.removedMessageIds ?? [],
    parentThreadId,
    record: encodeCheckpointRecord(write),
  };
}

export const NO_LEDGER_WRITES: StepLedgerWrites = Object.freeze({
  completions: Object.freeze([]),
  claims: Object.freeze([]),
});

/**
 * Ledger writes a store can apply as given: well-formed keys and ids, positive whole attempts,
 * claims that only insert (expected attempt 0) with a positive lease, and no key twice, since a
 * key written twice in one transaction has no order a reader could rely on.
 */
export function requireLedgerWrites(operation: string, ledger: StepLedgerWrites | undefined): void {
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
