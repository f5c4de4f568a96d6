import type { Message } from "@tenxgraph/core";
import type { StoreWrite, ThreadCheckpoint } from "@tenxgraph/core/storage";
import {
  ClaimLostError,
  decodeCheckpointRecord,
  StorageError,
  ThreadOwnerError,
} from "@tenxgraph/core/storage";
import type { Database } from "./connection/database.js";
import { toJsonb } from "./json.js";
import { claimsJsonb, completionsJsonb } from "./ledger/step-ledger.js";
import type { ClaimOutcome } from "./ledger/step-ledger.js";
import { TRANSCRIPT_REFUSED } from "./schema/functions/child-transcript.js";
import { CLAIM_LOST, OWNER_REFUSED } from "./schema/functions/put-checkpoint.js";

/** A step as one statement: `tenxgraph_put_checkpoint` (schema/functions/put-checkpoint.ts). */
export const PUT_CHECKPOINT = `SELECT * FROM tenxgraph_put_checkpoint(
  $1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::jsonb, $12, $13::jsonb, $14,
  $15::jsonb, $16::jsonb, $17)`;

/** Records the parent of a thread the same transaction just created. */
const SET_PARENT = `UPDATE threads SET parent_thread_id = $2 WHERE thread_id = $1`;

/**
 * Commits a write: one statement, or for a child thread's first write (`parentThreadId` with
 * `expectedVersion` 0) that statement and the update recording the parent in one transaction.
 * A child's first write happens once per subgraph run, so it can afford the extra round trips
 * that keep every other step at one. Once: a write cut off mid-flight may have committed, and a
 * second try would be refused as stale anyway.
 */
export async function writeStep(
  db: Database,
  write: StoreWrite,
  keepVersions: number | null,
): Promise<WrittenRow | undefined> {
  const params = stepWriteParams(write, keepVersions);
  const { threadId, parentThreadId } = write;
  if (write.expectedVersion !== 0 || parentThreadId === null) {
    const [row] = await db.query<WrittenRow>("putCheckpoint", "once", PUT_CHECKPOINT, params);
    return row;
  }
  return db.transaction("putCheckpoint", "once", async (client) => {
    const [row] = (await client.query<WrittenRow>(PUT_CHECKPOINT, params)).rows;
    if (row?.new_version != null) await client.query(SET_PARENT, [threadId, parentThreadId]);
    return row;
  });
}

/** The arguments of `tenxgraph_put_checkpoint`, in order. */
export function stepWriteParams(write: StoreWrite, keepVersions: number | null): unknown[] {
  return [
    write.threadId,
    write.incarnation,
    write.userId,
    write.expectedVersion,
    write.parentVersion,
    write.node,
    write.runId,
    write.status,
    toJsonb(write.record),
    write.newMessages.map((message) => message.id),
    messagesJsonb(write.newMessages),
    write.replacedMessages.map((message) => message.id),
    messagesJsonb(write.replacedMessages),
    write.removedMessageIds,
    completionsJsonb(write.ledger.completions),
    claimsJsonb(write.ledger.claims),
    keepVersions,
  ];
}

/** Message bodies as one `jsonb` array, each encoded as a message row stores it. */
function messagesJsonb(messages: readonly Message[]): string {
  return `[${messages.map(toJsonb).join(",")}]`;
}

/** What `tenxgraph_put_checkpoint` returns. */
export interface WrittenRow {
  /** `null` when nothing was written: a stale write. */
  new_version: string | null;
  found_version: string | null;
  /** The new version's transcript length. */
  message_count: number;
  thread_user_id: string | null;
  updated_at: Date;
  thread_incarnation: string | null;
  /** One outcome per riding claim, in order; `null` without claims. */
  claims: ClaimOutcome[] | null;
}

/**
 * The checkpoint a committed write made, field by field: a write carries more than a checkpoint
 * holds (its transcript change, its ledger), none of which may end up in the cached copy.
 */
export function writtenCheckpoint(write: StoreWrite, written: WrittenRow): ThreadCheckpoint {
  return {
    threadId: write.threadId,
    incarnation: write.incarnation,
    userId: written.thread_user_id,
    version: Number(written.new_version),
    parentVersion: write.parentVersion === 0 ? null : write.parentVersion,
    node: write.node,
    runId: write.runId,
    status: write.status,
    ...decodeCheckpointRecord(write.record),
    messageCount: written.message_count,
    updatedAt: written.updated_at.toISOString(),
    // Exact for the write that creates the thread (the only one that records it); a later write
    // may not name the parent, so a cached copy's is replaced by the row's when read back.
    parentThreadId: write.parentThreadId,
  };
}

/**
 * A write the step function refused, as the error that names why: a riding completion whose
 * claim is no longer held becomes `ClaimLostError` (the call its detail names); a transcript
 * change that does not fit the parent (an appended id already in the parent's transcript, a
 * replaced or removed id not in it, a parent not kept) a `StorageError` carrying the
 * function's message alone; a write naming a user other than the thread's owner,
 * `ThreadOwnerError`. Anything else is returned as it is.
 */
export function refusedWriteOr(error: unknown, write: StoreWrite): unknown {
  const cause = (error as { cause?: PgRefusal }).cause;
  const pgError = cause?.code ? cause : (error as PgRefusal | undefined);
  if (pgError?.code === CLAIM_LOST && pgError.detail) {
    const { key, attempt } = JSON.parse(pgError.detail) as { key: string; attempt: number };
    return new ClaimLostError(write.threadId, key, attempt);
  }
  if (pgError?.code === OWNER_REFUSED && write.userId !== null) {
    return new ThreadOwnerError(write.threadId, write.userId);
  }
  if (pgError?.code !== TRANSCRIPT_REFUSED) return error;
  return new StorageError("putCheckpoint", new Error(pgError.message));
}

/** The fields of a `pg` error the step function's refusals are told apart by. */
interface PgRefusal {
  code?: string;
  message?: string;
  detail?: string;
}
