import { ClaimLostError } from "../errors/errors.js";
import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { LedgerCall } from "./ledger-call.js";
import type { ResultEnvelope } from "./envelope.js";

/**
 * Records a call's result for the attempt that claimed it, as soon as the tool returned. A
 * failure here never fails the run: the side effect already happened and the model needs the
 * result. It is logged at error level and counted, because it is the one case where the
 * runtime knows its replay guarantee did not hold.
 *
 * A record refused by the fence is another matter: this attempt's claim was taken over, so the
 * call belongs to the taker, whose result the ledger holds (or will). Going on would put this
 * attempt's result in the transcript, and the run's step write can still commit when the taker
 * read an older version. So it throws {@link ClaimLostError}: the node fails and nothing of
 * this attempt is written; a continued run replays the taker's result.
 */
export async function recordResult(
  call: LedgerCall,
  attempt: number,
  envelope: ResultEnvelope,
  ctx: NodeContext,
): Promise<void> {
  const key = call.key!;
  const fields = {
    threadId: ctx.threadId,
    key,
    tool: call.tool.name,
    toolCallId: call.call.id,
    attempt,
  };
  let lost: ClaimLostError | undefined;
  try {
    const recorded = await ctx.runtime.checkpointer.completeCall(
      ctx.threadId,
      { key, attempt },
      envelope,
    );
    if (!recorded) {
      call.log.warn(
        fields,
        "Tool call result was not recorded: its claim was taken over by another execution (fenced out)",
      );
      lost = new ClaimLostError(ctx.threadId, key, attempt);
    }
  } catch (error) {
    reportUnrecorded(call, attempt, error, ctx);
  }
  if (lost) throw lost;
}

/**
 * A completed call whose record may not have been written (its own record failed, or the step
 * write it rode in failed without saying whether it applied): logged at error level and
 * counted, because it is the one case where the runtime knows its replay guarantee may not hold.
 */
export function reportUnrecorded(
  call: LedgerCall,
  attempt: number,
  error: unknown,
  ctx: NodeContext,
): void {
  ctx.runtime.metrics.ledgerRecordFailures.add(1, { tool: call.tool.name });
  call.log.error(
    {
      threadId: ctx.threadId,
      key: call.key,
      tool: call.tool.name,
      toolCallId: call.call.id,
      attempt,
      err: error,
    },
    "Tool call COMPLETED but could not be recorded; a replay of this node may execute it again",
  );
}

/** Marks a claimed call as paused in `interrupt()`: not done, and not in doubt. */
export async function releaseClaim(
  call: LedgerCall,
  attempt: number,
  ctx: NodeContext,
): Promise<void> {
  try {
    await ctx.runtime.checkpointer.releaseCall(ctx.threadId, { key: call.key!, attempt });
  } catch (error) {
    // The claim stays `started`; on resume the call is treated as in doubt, which is safe.
    call.log.warn(
      { err: error, key: call.key },
      "Could not release the claim of an interrupted tool call",
    );
  }
}
