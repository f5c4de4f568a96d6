import type { LedgerEntry, LedgerStatus } from "./ledger-entry.js";

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
  /** ISO-8601, by the store's clock; `null` once the entry is no longer started. */
  leaseExpiresAt: string | null;
  /** Milliseconds from the read to `leaseExpiresAt`, by the store's clock; used when started. */
  leaseExpiresInMs: number;
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
      const heartbeatAt = row.heartbeatAt ?? startedAt;
      return {
        ...base,
        status: "started",
        heartbeatAt,
        leaseExpiresAt: row.leaseExpiresAt ?? heartbeatAt,
        leaseExpiresInMs: Math.round(row.leaseExpiresInMs),
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
