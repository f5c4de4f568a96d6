import { sleep } from "../node/deadline.js";
import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { LedgerCall } from "./ledger-call.js";
import { toolErrorMessage } from "../messages/tool-result.js";
import type { CallPlan } from "./call-plan.js";
import { claimOne, planFromEntry } from "./claim.js";
import type { LedgerEntry } from "../storage/ledger-entry.js";
import { toolTimeoutMs } from "./tool-timeout.js";

const POLL_MS = 100;

/**
 * Another live execution holds this call's claim: wait for its result rather than run the call
 * a second time. Ends with the recorded result, a claim of our own if the holder went away, or
 * `TOOL_CONFLICT_001` once the holder ran past the tool's deadline.
 */
export async function awaitClaim(
  call: LedgerCall,
  held: LedgerEntry,
  ctx: NodeContext,
): Promise<CallPlan> {
  call.log.info(
    { key: call.key, tool: call.tool.name, ownerRunId: held.ownerRunId },
    "Tool call is held by another execution: waiting for its result",
  );
  const timeout = toolTimeoutMs(call, ctx);
  // Past the tool's deadline, a holder that died is noticed once its lease runs out: the
  // holder's lease, which may be longer than ours, so a dead holder is taken over, not given up on.
  const slack = Math.max(ctx.runtime.claimStaleAfterMs, leaseLength(held));
  const deadline = timeout === null ? Infinity : Date.now() + timeout + slack;
  let holder = held;
  while (Date.now() <= deadline) {
    await sleep(POLL_MS, ctx.signal);
    let entry: LedgerEntry | undefined;
    try {
      [entry] = await ctx.runtime.checkpointer.getCalls(ctx.threadId, [call.key!]);
    } catch (error) {
      call.log.warn({ err: error, key: call.key }, "Ledger read failed while waiting; retrying");
      continue;
    }
    const plan = planFromEntry(call, entry, ctx);
    if (plan.kind === "claim") return claimOne(call, plan.expectedAttempt, ctx);
    if (plan.kind !== "wait") return plan;
    holder = plan.entry;
  }
  return {
    kind: "settled",
    message: toolErrorMessage(
      call.tool.name,
      call.call.id,
      "TOOL_CONFLICT_001",
      `another execution (run ${holder.ownerRunId}) is running this call and did not finish in ` +
        `time; it was not run twice`,
    ),
  };
}

/** The lease the holder stated, as its last claim or heartbeat set it (0 when not started). */
function leaseLength(entry: LedgerEntry): number {
  if (entry.status !== "started") return 0;
  return Math.max(0, Date.parse(entry.leaseExpiresAt) - Date.parse(entry.heartbeatAt));
}
