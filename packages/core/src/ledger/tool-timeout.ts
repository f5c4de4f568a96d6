import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { LedgerCall } from "./ledger-call.js";

/** The call's deadline in ms: the tool's own `timeout` if set, else the run's `toolTimeout`. */
export function toolTimeoutMs(call: LedgerCall, ctx: NodeContext): number | null {
  const { timeout } = call.tool;
  if (timeout === undefined) return ctx.runtime.toolTimeoutMs;
  // tool() admits only null and numbers other than NaN: null, 0, negative or Infinity mean none.
  return timeout === null || timeout <= 0 || timeout === Infinity ? null : timeout * 1000;
}
