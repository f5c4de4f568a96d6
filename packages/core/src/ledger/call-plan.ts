import type { ToolMessage } from "../messages/message.js";
import type { ReplayedResult } from "./envelope.js";
import type { LedgerEntry } from "../storage/ledger-entry.js";
import type { HeldClaim } from "../node/run-watch.js";

/**
 * What to do with one call, decided from its ledger entry. Plans lead to one another
 * (`in_doubt` → `run`, `wait` → `replay`) until a call is settled.
 */
export type CallPlan =
  /** Recorded before: return the result without calling the tool. */
  | { kind: "replay"; result: ReplayedResult }
  /**
   * Claimed (or unkeyed, `attempt: null`): run the tool and record it. `held` is the claim's
   * heartbeat when it was won ahead, in the write of the step that issued the call.
   */
  | { kind: "run"; attempt: number | null; held?: HeldClaim }
  /**
   * Outcome unknown: started by an execution that is gone and never recorded, or recorded as
   * unknown (a timeout) by another call of the same domain key. The tool's policy decides.
   */
  | { kind: "in_doubt"; entry: LedgerEntry }
  /** Held by a live execution: wait for its result. */
  | { kind: "wait"; entry: LedgerEntry }
  /** Settled without running the tool now (an answer recorded by policy, or an error). */
  | { kind: "settled"; message: ToolMessage };
