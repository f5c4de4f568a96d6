import type { ClaimResult, LedgerClaim, LedgerCompletion } from "@tenxgraph/core/storage";
import { toJsonb } from "../json.js";
import { toLedgerEntry } from "../rows.js";
import type { ToolExecutionRow } from "../rows.js";

/**
 * What `tenxgraph_claim_absent_calls` reports for one claim of a step write: won, or lost to the
 * entry that is there, its columns as JSON (timestamps as ISO-8601 text).
 */
export type ClaimOutcome = { won: true } | { won: false; entry: JsonRow<ToolExecutionRow> };

/** A row whose timestamps came through `to_jsonb` as text. */
type JsonRow<Row> = {
  [Column in keyof Row]: Row[Column] extends Date
    ? string
    : Row[Column] extends Date | null
      ? string | null
      : Row[Column];
};

/**
 * The completions of a step write as the step function's `p_completions`: `[{key, attempt,
 * result}]`, each result encoded for `jsonb` as `completeCall` stores it.
 */
export function completionsJsonb(completions: readonly LedgerCompletion[]): string {
  const items = completions.map(
    ({ attempt, result }) =>
      `{"key":${JSON.stringify(attempt.key)},"attempt":${attempt.attempt},"result":${toJsonb(result)}}`,
  );
  return `[${items.join(",")}]`;
}

/**
 * The claims of a step write as the step function's `p_claims`. Plain `JSON.stringify` is safe
 * for `jsonb`: the base checkpointer refused ids holding U+0000 or a lone surrogate.
 */
export function claimsJsonb(claims: readonly LedgerClaim[]): string {
  return JSON.stringify(
    claims.map(({ key, toolName, ownerRunId, leaseMs }) => ({
      key,
      toolName,
      ownerRunId,
      leaseMs,
    })),
  );
}

/** The outcome of each claim, in the claims' order; a won claim is always attempt 1. */
export function toClaimResults(
  claims: readonly LedgerClaim[],
  outcomes: readonly ClaimOutcome[] | null,
): ClaimResult[] {
  return claims.map(({ key }, index) => {
    const outcome = outcomes?.[index];
    if (!outcome) throw new Error(`the step write returned no outcome for the claim of '${key}'`);
    return outcome.won
      ? { won: true, key, attempt: 1 }
      : { won: false, key, entry: toLedgerEntry(withDates(outcome.entry)) };
  });
}

function withDates(row: JsonRow<ToolExecutionRow>): ToolExecutionRow {
  const date = (text: string | null) => (text === null ? null : new Date(text));
  return {
    ...row,
    started_at: new Date(row.started_at),
    heartbeat_at: date(row.heartbeat_at),
    lease_expires_at: date(row.lease_expires_at),
    completed_at: date(row.completed_at),
  };
}
