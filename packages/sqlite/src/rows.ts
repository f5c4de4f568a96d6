import type {
  EncodedCheckpointRecord,
  LedgerEntry,
  SeqRanges,
  ThreadCheckpoint,
  ThreadStatus,
  ThreadSummary,
} from "@tenxgraph/core/storage";
import { decodeCheckpointRecord, ledgerEntryFromRow, prefixRanges } from "@tenxgraph/core/storage";

/** A row of `threads` joined with one of its rows of `states` (one that has a transcript). */
export interface CheckpointRow {
  thread_id: string;
  parent_thread_id: string | null;
  incarnation: string;
  user_id: string | null;
  version: number;
  parent_version: number | null;
  node: string | null;
  run_id: string | null;
  message_count: number;
  updated_at: string;
  status: string;
  /** The runtime's record, as `encodeCheckpointRecord` made it (see migration step 8). */
  record_json: string;
}

/** A version's transcript as `states` keeps it (see migration step 6). */
export interface TranscriptRow {
  /** NULL for a version written before the upgrade to history: its transcript is unknown. */
  message_count: number | null;
  /** JSON `[[start, end], ...]`; NULL for the prefix `[0, message_count)`. */
  message_ranges: string | null;
}

/** A row of `threads` as listed. */
export interface ThreadRow {
  thread_id: string;
  parent_thread_id: string | null;
  user_id: string | null;
  status: string;
  version: number;
  updated_at: string;
}

/** A row of `tool_executions`. */
export interface ToolExecutionRow {
  call_key: string;
  tool_name: string;
  status: "started" | "interrupted" | "completed";
  attempt: number;
  owner_run_id: string;
  started_at: string;
  heartbeat_at: string | null;
  lease_expires_at: string | null;
  result_json: string | null;
  completed_at: string | null;
}

export function toCheckpoint(row: CheckpointRow): ThreadCheckpoint {
  return {
    threadId: row.thread_id,
    incarnation: row.incarnation,
    userId: row.user_id,
    version: row.version,
    parentVersion: row.parent_version,
    node: row.node,
    runId: row.run_id,
    status: row.status as ThreadStatus,
    ...decodeCheckpointRecord(JSON.parse(row.record_json) as EncodedCheckpointRecord),
    messageCount: row.message_count,
    updatedAt: row.updated_at,
    parentThreadId: row.parent_thread_id,
  };
}

/** The message rows a version holds, or `null` when its transcript was never recorded. */
export function toTranscript(row: TranscriptRow | undefined): SeqRanges | null {
  if (!row || row.message_count === null) return null;
  if (row.message_ranges === null) return prefixRanges(row.message_count);
  return JSON.parse(row.message_ranges) as SeqRanges;
}

export function toThreadSummary(row: ThreadRow): ThreadSummary {
  return {
    threadId: row.thread_id,
    parentThreadId: row.parent_thread_id,
    userId: row.user_id,
    status: row.status as ThreadStatus,
    version: row.version,
    updatedAt: row.updated_at,
  };
}

/**
 * A ledger entry, with the time left on a started entry's lease measured at `nowMs`. SQLite is
 * one machine's store, so that machine's clock is the store's clock every process shares.
 */
export function toLedgerEntry(row: ToolExecutionRow, nowMs: number): LedgerEntry {
  const leaseExpiresAt = row.lease_expires_at ?? row.heartbeat_at ?? row.started_at;
  return ledgerEntryFromRow({
    key: row.call_key,
    toolName: row.tool_name,
    status: row.status,
    attempt: row.attempt,
    ownerRunId: row.owner_run_id,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    leaseExpiresAt: row.lease_expires_at,
    leaseExpiresInMs: Date.parse(leaseExpiresAt) - nowMs,
    result: () => JSON.parse(row.result_json ?? "null") as unknown,
    completedAt: row.completed_at,
  });
}
