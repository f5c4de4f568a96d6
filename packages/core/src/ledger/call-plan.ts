import type { ToolMessage } from "../messages/message.js";
import type { ReplayedResult } from "./envelope.js";
import type { LedgerEntry, StartedLedgerEntry } from "./ledger-entry.js";

/**
 * What to do with one call, decided from its ledger entry. Plans lead to one another
 * (`in_doubt` → `run`, `wait` → `replay`) until a call is settled.
 */
export type CallPlan =
  /** Recorded before: return the result without calling the tool. */
  | { kind: "replay"; result: ReplayedResult }
  /** Claimed (or unkeyed, `attempt: null`): run the tool and record it. */
  | { kind: "run"; attempt: number | null }
  /** Started by an execution that is gone, never recorded: the tool's policy decides. */
  | { kind: "in_doubt"; entry: StartedLedgerEntry }
  /** Held by a live execution: wait for its result. */
  | { kind: "wait"; entry: LedgerEntry }
  /** Settled without running the tool now (an answer recorded by policy, or an error). */
  | { kind: "settled"; message: ToolMessage };
