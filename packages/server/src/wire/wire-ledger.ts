import type { LedgerEntry as WireLedgerEntry } from "@tenxgraph/client";
import type { LedgerEntry } from "@tenxgraph/core/storage";

/** A ledger entry in the wire's snake_case. */
export function toWireLedgerEntry(entry: LedgerEntry): WireLedgerEntry {
  return {
    key: entry.key,
    tool_name: entry.toolName,
    status: entry.status,
    attempt: entry.attempt,
    owner_run_id: entry.ownerRunId,
    started_at: entry.startedAt,
    ...(entry.status === "completed"
      ? { result: entry.result, completed_at: entry.completedAt }
      : {}),
    ...(entry.status === "started"
      ? {
          heartbeat_at: entry.heartbeatAt,
          lease_expires_at: entry.leaseExpiresAt,
          lease_expires_in_ms: entry.leaseExpiresInMs,
        }
      : {}),
  };
}
