import type { RunMeta } from "./run-types.js";
import type { WireMessage } from "./wire-message.js";

/** A tool call in the thread's ledger: claimed (`started`), `completed` with its result, or `interrupted`. */
export interface LedgerEntry {
  /** `<assistant message id>:<tool call id>`, or the tool's domain key. */
  key: string;
  tool_name: string;
  status: "started" | "completed" | "interrupted";
  attempt: number;
  owner_run_id: string | null;
  started_at: string;
  /** When `completed`: the recorded envelope `{ __kind__, value }`. */
  result?: unknown;
  completed_at?: string | null;
  /**
   * When `started`: the claim's last heartbeat, and when the claimant's lease expires. Measured
   * by the store's clock, `lease_expires_in_ms` is positive while the lease runs and negative
   * (how long ago) once it expired: a dead run's claim is in doubt from then on.
   */
  heartbeat_at?: string | null;
  lease_expires_at?: string | null;
  lease_expires_in_ms?: number | null;
}

/**
 * A call that may or may not have taken effect. `decidable` calls (tool policy `"interrupt"`)
 * wait for {@link InDoubtDecision}; the others are decided by their tool's policy when the run
 * continues.
 */
export interface InDoubtCall {
  key: string;
  tool_name: string;
  arguments?: unknown;
  attempt: number;
  interrupt_id: string | null;
  decidable: boolean;
  /** The ledger entry's fields, for calls not yet asked about (`decidable` false). */
  status?: "started";
  owner_run_id?: string | null;
  started_at?: string;
  heartbeat_at?: string | null;
  lease_expires_at?: string | null;
  /** Until (positive) or since (negative) the claimant's lease expiry, by the store's clock. */
  lease_expires_in_ms?: number | null;
}

/**
 * What to do with an in-doubt call: run it again, tell the model it failed, or record `result`
 * as what the tool returned (it did happen).
 */
export type InDoubtDecision =
  | { action: "retry" }
  | { action: "fail"; reason?: string }
  | { action: "complete"; result: unknown };

/** The answer to `decideInDoubt`: the run that carried the decision out. */
export interface InDoubtDecisionResult {
  messages: WireMessage[];
  meta: Omit<RunMeta, "is_new_thread" | "thread_name">;
}
