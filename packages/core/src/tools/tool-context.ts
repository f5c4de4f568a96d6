import type { Logger } from "../events/logger.js";
import type { BaseState } from "../definition/reducers.js";
import type { Store } from "../store/store.js";

/** What a tool may pass to `ctx.update`: fields of the state other than `messages`. */
export type ToolStateUpdate<S extends BaseState = BaseState> = Partial<Omit<S, "messages">>;

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
   * in the ledger, as whole values: when parallel calls change one field differently, the last
   * in call order is kept, with a warning. For a field with a reducer (a sum, a list, a set),
   * use {@link update}. `messages` is a copy of the transcript: a tool's result becomes its
   * message.
   */
  readonly state: S;
  /**
   * Updates the node's state the way a node's returned update does: fields go through their
   * reducers, or replace. A call's updates, in the order it made them, are applied after all
   * the node's calls settled, call by call in tool-call order, so parallel calls combine
   * exactly as if run one after another (three calls each adding 1 to 100 under a sum make
   * 103). They are recorded with the result and applied again when the call is replayed;
   * a call that failed, timed out or was stopped has none applied. `ctx.state` does not show
   * them. Values must be plain JSON; `messages` is refused (a `TypeError`).
   *
   * @example
   * execute: async (args, ctx) => {
   *   ctx.update({ refunded: args.amount, tags: ["refund"] }); // `refunded: sum`, `tags: union`
   *   return "Refunded";
   * }
   */
  update(update: ToolStateUpdate<S>): void;
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
  /**
   * The graph's long-term store (`compile({ store })`); without one, calls fail with
   * `STORE_001`. A store write is a side effect the ledger records with the call: once the
   * call's result is recorded, a replay returns that result and does not run the tool, so the
   * write is not repeated. A call that crashed before its result was recorded is in doubt, and
   * retrying it writes again: `put` by a stable key (`ctx.idempotencyKey`) makes that harmless.
   */
  readonly store: Store;
}
