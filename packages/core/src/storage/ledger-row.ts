import type { LedgerEntry, LedgerStatus } from "../ledger/ledger-entry.js";

/**
 * For checkpointer implementations: a ledger entry as a SQL row holds it, one flat record
 * whatever its status. {@link ledgerEntryFromRow} turns it into the {@link LedgerEntry} union.
 */
export interface LedgerRow {
  key: string;
  toolName: string;
  status: LedgerStatus;
  attempt: number;
  ownerRunId: string;
  /** ISO-8601. */
  startedAt: string;
  /** ISO-8601; `null` once the entry is no longer started (the claim time is used then). */
  heartbeatAt: string | null;
  /** Milliseconds since `heartbeatAt` (or the claim), by the store's clock; used when started. */
  heartbeatAgeMs: number;
  /** The recorded result, decoded only for a completed entry. */
  result: () => unknown;
  /** ISO-8601; `null` when not completed. */
  completedAt: string | null;
}

/** The {@link LedgerEntry} a row stands for: only the fields its status has. */
export function ledgerEntryFromRow(row: LedgerRow): LedgerEntry {
  const { key, toolName, attempt, ownerRunId, startedAt } = row;
  const base = { key, toolName, attempt, ownerRunId, startedAt };
  switch (row.status) {
    case "started": {
      const heartbeatAgeMs = Math.max(0, Math.round(row.heartbeatAgeMs));
      return {
        ...base,
        status: "started",
        heartbeatAt: row.heartbeatAt ?? startedAt,
        heartbeatAgeMs,
      };
    }
    case "interrupted":
      return { ...base, status: "interrupted" };
    case "completed":
      return {
        ...base,
        status: "completed",
        result: row.result(),
        completedAt: row.completedAt ?? startedAt,
      };
  }
}
