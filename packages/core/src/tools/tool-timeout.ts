import { silentLogger } from "../events/logger.js";
import { resolveTimeout } from "../runtime/run-config.js";
import type { NodeContext } from "../runtime/node-context.js";
import type { ReadyCall } from "./prepared-call.js";

/** The call's deadline in ms: the tool's own `timeout` if set, else the run's `toolTimeout`. */
export function toolTimeoutMs(call: ReadyCall, ctx: NodeContext): number | null {
  if (call.tool.timeout === undefined) return ctx.runtime.toolTimeoutMs;
  // tool() already rejected non-numbers, so nothing is left to warn about here.
  return resolveTimeout(call.tool.timeout, "timeout", 0, silentLogger);
}
