import type { Logger } from "../events/logger.js";
import type { BaseState } from "../graph/reducers.js";

/** What a tool's `execute` gets besides its arguments. */
export interface ToolContext<S extends BaseState = BaseState> {
  /**
   * Stable for this call across every replay, unique per thread and call: hand it to the
   * provider (payments, email) so the small window the ledger cannot close is closed there.
   * With a tool's `idempotencyKey(args)`, it is that domain key.
   */
  readonly idempotencyKey: string;
  /** Aborts on the tool's timeout, the node's timeout and stop. */
  readonly signal: AbortSignal;
  /**
   * This call's private copy of the state. Fields a tool changes are merged back after the
   * node's calls settle (not when the call failed or timed out), and recorded with the result
   * in the ledger. `messages` is a copy of the transcript: a tool's result becomes its message.
   */
  readonly state: S;
  readonly threadId: string;
  /** Id of the assistant message that issued the call. */
  readonly messageId: string;
  readonly toolCallId: string;
  /** The ledger attempt running now: 1 the first time, more after in-doubt retries; 0 without a ledger. */
  readonly attempt: number;
  readonly runId: string;
  readonly userId: string | null;
  /** Bound to thread, run, node and tool call. */
  readonly logger: Logger;
  /** Sends `data` to `streamMode: "custom"` consumers, like a node's `ctx.write`. */
  write(data: unknown): void;
}
