import type {
  EncodedCheckpointRecord,
  LedgerEntry,
  ThreadCheckpoint,
  ThreadStatus,
  ThreadSummary,
} from "@tenxgraph/core/storage";
import { decodeCheckpointRecord, ledgerEntryFromRow } from "@tenxgraph/core/storage";
import { fromJsonb } from "./json.js";

/**
 * A row of `threads` joined with one of its rows of `states`: the current one (`version` and
 * `message_count` of the thread), or a kept version's (the state row's).
 */
export interface CheckpointRow {
  thread_id: string;
  parent_thread_id: string | null;
  incarnation_id: string;
  user_id: string | null;
  version: string;
  incarnation: string;
  message_count: number;
  updated_at: Date;
  parent_version: string | null;
  node: string | null;
  run_id: string | null;
  status: string;
  /** The runtime's record, as `encodeCheckpointRecord` made it (see migration 10). */
  record: unknown;
}

/** A row of `threads` as listed. */
export interface ThreadRow {
  thread_id: string;
  parent_thread_id: string | null;
  user_id: string | null;
  status: string;
  version: string;
  updated_at: Date;
}

/** A row of `tool_executions`, with the time left on its lease by the server's clock. */
export interface ToolExecutionRow {
  call_key: string;
  tool_name: string;
  status: "started" | "interrupted" | "completed";
  attempt: number;
  owner_run_id: string;
  started_at: Date;
  heartbeat_at: Date | null;
  lease_expires_at: Date | null;
  lease_expires_in_ms: number | null;
  result: unknown;
  completed_at: Date | null;
}

/** The columns {@link ToolExecutionRow} is read from. */
export const TOOL_EXECUTION_COLUMNS = `call_key, tool_name, status, attempt, owner_run_id,
  started_at, heartbeat_at, lease_expires_at,
  extract(epoch FROM lease_expires_at - clock_timestamp()) * 1000 AS lease_expires_in_ms,
  result, completed_at`;

export function toCheckpoint(row: CheckpointRow): ThreadCheckpoint {
  return {
    threadId: row.thread_id,
    incarnation: row.incarnation_id,
    userId: row.user_id,
    // bigint arrives as a string; versions stay far below 2^53.
    version: Number(row.version),
    parentVersion: row.parent_version === null ? null : Number(row.parent_version),
    node: row.node,
    runId: row.run_id,
    status: row.status as ThreadStatus,
    ...decodeCheckpointRecord(fromJsonb(row.record) as EncodedCheckpointRecord),
    messageCount: row.message_count,
    updatedAt: row.updated_at.toISOString(),
    parentThreadId: row.parent_thread_id,
  };
}

export function toThreadSummary(row: ThreadRow): ThreadSummary {
  return {
    threadId: row.thread_id,
    parentThreadId: row.parent_thread_id,
    userId: row.user_id,
    status: row.status as ThreadStatus,
    version: Number(row.version),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** A ledger entry; the time left on a started entry's lease was measured by the server's clock. */
export function toLedgerEntry(row: ToolExecutionRow): LedgerEntry {
  return ledgerEntryFromRow({
    key: row.call_key,
    toolName: row.tool_name,
    status: row.status,
    attempt: row.attempt,
    ownerRunId: row.owner_run_id,
    startedAt: row.started_at.toISOString(),
    heartbeatAt: row.heartbeat_at?.toISOString() ?? null,
    leaseExpiresAt: row.lease_expires_at?.toISOString() ?? null,
    leaseExpiresInMs: Number(row.lease_expires_in_ms ?? 0),
    result: () => fromJsonb(row.result),
    completedAt: row.completed_at?.toISOString() ?? null,
  });
}
