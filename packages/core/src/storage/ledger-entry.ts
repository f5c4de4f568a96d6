/**
 * One row of the tool ledger: what is known about one tool call on one thread.
 *
 * - `started`: claimed by `attempt`; the call may or may not have taken effect until it is
 *   completed. If its claimant lets its lease expire (stops heartbeating), the call is *in doubt*.
 * - `interrupted`: the call paused in `interrupt()`, or was stopped before its tool began; it
 *   did not complete and is not in doubt.
 * - `completed`: the call returned; `result` is the recorded envelope, replayed instead of the tool.
 */
export type LedgerEntry = StartedLedgerEntry | InterruptedLedgerEntry | CompletedLedgerEntry;

interface LedgerEntryBase {
  /** `<assistant message id>:<tool call id>`, or the tool's domain key. Scoped by thread. */
  key: string;
  toolName: string;
  /** 1 for the first claim; each later claim of the same key adds one. */
  attempt: number;
  /** The run that made the latest claim. */
  ownerRunId: string;
  /** ISO-8601 time of the latest claim. */
  startedAt: string;
}

/**
 * Claimed and possibly running; in doubt once its lease expired. The lease is the claimant's
 * own (its `claimStaleAfterMs`), set by the claim and renewed by each heartbeat on the store's
 * clock, so every reader judges it the same way whatever its own settings or clock.
 */
export interface StartedLedgerEntry extends LedgerEntryBase {
  status: "started";
  /** ISO-8601 time the claimant last said it is still running the call. */
  heartbeatAt: string;
  /** ISO-8601 time, by the store's clock, after which the claim counts as abandoned. */
  leaseExpiresAt: string;
  /**
   * Milliseconds from the read to `leaseExpiresAt`, measured by the store's clock: positive
   * while the lease runs, negative (how long ago) once it expired.
   */
  leaseExpiresInMs: number;
}

/** Paused in `interrupt()`: not done, not in doubt; claimed again on resume. */
export interface InterruptedLedgerEntry extends LedgerEntryBase {
  status: "interrupted";
}

/** Returned and recorded: replayed instead of run. */
export interface CompletedLedgerEntry extends LedgerEntryBase {
  status: "completed";
  /** The recorded result, as stored: a {@link ResultEnvelope} when written by tenxgraph. */
  result: unknown;
  completedAt: string;
}

/** `started`, `interrupted` or `completed`. */
export type LedgerStatus = LedgerEntry["status"];

/** A request to claim one call. */
export interface LedgerClaim {
  key: string;
  toolName: string;
  ownerRunId: string;
  /**
   * How long the claim stays live without a heartbeat (the claimant's `claimStaleAfterMs`): the
   * store sets the lease to expire this long after the claim, by its own clock.
   */
  leaseMs: number;
  /**
   * The attempt the claimant saw: `0` claims a call with no entry (an insert that only one
   * execution wins); `n` takes over an entry whose attempt is still `n` (compare-and-swap).
   */
  expectedAttempt: number;
}

/** The outcome of one claim: won with the new attempt number, or lost to the entry that is there. */
export type ClaimResult =
  { won: true; key: string; attempt: number } | { won: false; key: string; entry: LedgerEntry };

/** Identifies one claimed attempt, for fenced writes. */
export interface AttemptRef {
  key: string;
  attempt: number;
}
