import type { NodeContext } from "../runtime/node-context.js";
import type { ReadyCall } from "../tools/prepared-call.js";
import type { ResultEnvelope } from "./envelope.js";

/**
 * Records a call's result for the attempt that claimed it, as soon as the tool returned. A
 * failure here never fails the run: the side effect already happened and the model needs the
 * result. It is logged at error level and counted, because it is the one case where the
 * runtime knows its replay guarantee did not hold.
 */
export async function recordResult(
  call: ReadyCall,
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
    }
  } catch (error) {
    ctx.runtime.metrics.ledgerRecordFailures.add(1, { tool: call.tool.name });
    call.log.error(
      { ...fields, err: error },
      "Tool call COMPLETED but could not be recorded; a replay of this node may execute it again",
    );
  }
}

/** Marks a claimed call as paused in `interrupt()`: not done, and not in doubt. */
export async function releaseClaim(
  call: ReadyCall,
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
