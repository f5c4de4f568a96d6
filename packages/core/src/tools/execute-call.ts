import { NodeTimeoutError, errorText } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { BaseState } from "../graph/reducers.js";
import type { ToolMessage } from "../messages/message.js";
import { awaitClaim } from "../ledger/await-claim.js";
import type { CallPlan } from "../ledger/call-plan.js";
import { messageEnvelope } from "../ledger/envelope.js";
import { ledgerKey } from "../ledger/ledger-key.js";
import { resolveInDoubt } from "../ledger/in-doubt.js";
import { recordResult, releaseClaim } from "../ledger/record.js";
import { runWithDeadline } from "../runtime/deadline.js";
import { FAULT_POINTS } from "../runtime/fault-points.js";
import { isInterruptSignal, withInterruptScope } from "../runtime/interrupt.js";
import type { NodeContext } from "../runtime/node-context.js";
import { changedFields } from "./parallel-calls.js";
import type { ReadyCall } from "./prepared-call.js";
import type { ToolContext } from "./tool-context.js";
import { toolErrorMessage, toToolMessage } from "./tool-result.js";
import { toolTimeoutMs } from "./tool-timeout.js";

/** The state one call works on, and the field values it started from. */
export interface Branch<S extends BaseState> {
  state: S;
  baseline: Record<string, unknown>;
}

/** How one call settled. */
export interface CallOutcome {
  message: ToolMessage;
  replayed: boolean;
  /** State fields the call changed (or, replayed, had changed when it ran). */
  changes: Record<string, unknown>;
}

/**
 * Carries one call from its plan to a result: replay it, resolve it in doubt, wait for the
 * execution holding it, or run it. Runs inside the call's interrupt scope, so `interrupt()` in
 * the tool (or the in-doubt policy) gets an id derived from this call.
 */
export function executeCall<S extends BaseState>(
  call: ReadyCall,
  plan: CallPlan,
  branch: Branch<S>,
  ctx: NodeContext,
): Promise<CallOutcome> {
  return withInterruptScope(
    {
      idBase: call.interruptBase,
      node: ctx.node,
      toolCallId: call.call.id,
      answers: ctx.runtime.resumeAnswers,
    },
    () => settle(call, plan, branch, ctx),
  );
}

async function settle<S extends BaseState>(
  call: ReadyCall,
  initial: CallPlan,
  branch: Branch<S>,
  ctx: NodeContext,
): Promise<CallOutcome> {
  let plan = initial;
  for (;;) {
    switch (plan.kind) {
      case "replay": {
        ctx.runtime.metrics.ledgerHits.add(1, { tool: call.tool.name });
        call.log.info(
          { key: call.key, tool: call.tool.name },
          "Tool call replayed from the ledger",
        );
        Object.assign(branch.state, structuredClone(plan.result.stateChanges));
        // A domain key replays a fact recorded for an earlier turn, whose call may have had the
        // same id (providers reuse `call_1`): that message is already in the transcript, where
        // re-appending it is a no-op that would leave this call unanswered. Answer with a new one.
        const recorded = plan.result.message;
        const message = branch.state.messages.some((m) => m.id === recorded.id)
          ? toToolMessage(recorded, call.call.id)
          : recorded;
        return { message, replayed: true, changes: plan.result.stateChanges };
      }
      case "settled":
        return { message: plan.message, replayed: false, changes: {} };
      case "run":
        return runTool(call, plan.attempt, branch, ctx);
      case "in_doubt":
        plan = await resolveInDoubt(call, plan.entry, ctx, (attempt, signal) =>
          toolContext(call, attempt, signal, branch.state, ctx),
        );
        break;
      case "wait":
        plan = await awaitClaim(call, plan.entry, ctx);
        break;
    }
  }
}

/**
 * Runs the tool under its deadline and records the result as soon as it returns, before the
 * node goes on. A tool that ignores its signal cannot hold the node: the deadline settles the
 * call and the late result is never recorded.
 */
async function runTool<S extends BaseState>(
  call: ReadyCall,
  attempt: number | null,
  branch: Branch<S>,
  ctx: NodeContext,
): Promise<CallOutcome> {
  const release =
    attempt === null ? () => false : ctx.runtime.watch.hold({ key: call.key!, attempt });
  const timeoutMs = toolTimeoutMs(call, ctx);
  const started = performance.now();
  let message: ToolMessage;
  try {
    const output = await runWithDeadline(
      (signal) =>
        call.tool.execute(call.args, toolContext(call, attempt ?? 0, signal, branch.state, ctx)),
      {
        parent: ctx.signal,
        timeoutMs,
        onTimeout: () => new NodeTimeoutError("tool", call.tool.name, (timeoutMs ?? 0) / 1000),
      },
    );
    message = toToolMessage(output, call.call.id);
  } catch (error) {
    if (isInterruptSignal(error) && attempt !== null) await releaseClaim(call, attempt, ctx);
    // Stop or the node's deadline: the node's result is discarded and the claim stays in doubt.
    if (isInterruptSignal(error) || ctx.signal.aborted) throw error;
    message = failureMessage(call, error, ctx);
  } finally {
    release();
    ctx.runtime.metrics.toolDuration.record(performance.now() - started, { tool: call.tool.name });
  }
  const changes = changedFields(branch.baseline, branch.state);
  const where = {
    threadId: ctx.threadId,
    runId: ctx.runId,
    node: ctx.node,
    toolName: call.tool.name,
    key: call.key,
  };
  await ctx.runtime.faultPoints?.hit(FAULT_POINTS.TOOL_AFTER_RETURN, where);
  if (attempt !== null) {
    const origin = ledgerKey(call.messageId, call.call.id);
    await recordResult(call, attempt, messageEnvelope(message, changes, origin), ctx);
    await ctx.runtime.faultPoints?.hit(FAULT_POINTS.LEDGER_AFTER_RECORD, where);
  }
  return { message, replayed: false, changes };
}

function failureMessage(call: ReadyCall, error: unknown, ctx: NodeContext): ToolMessage {
  if (error instanceof NodeTimeoutError) {
    ctx.runtime.metrics.toolTimeouts.add(1, { tool: call.tool.name });
    call.log.warn({ tool: call.tool.name, key: call.key }, error.message);
    return toolErrorMessage(call.tool.name, call.call.id, "NODE_TIMEOUT_002", error.message);
  }
  ctx.runtime.metrics.toolErrors.add(1, { tool: call.tool.name });
  const text = errorText(error);
  call.log.warn({ tool: call.tool.name, key: call.key, err: error }, `Tool failed: ${text}`);
  const code =
    isTenxgraphError(error) && error.code.startsWith("TOOL_") ? error.code : "TOOL_ERROR_001";
  return toolErrorMessage(call.tool.name, call.call.id, code, text);
}

function toolContext<S extends BaseState>(
  call: ReadyCall,
  attempt: number,
  signal: AbortSignal,
  state: S,
  ctx: NodeContext,
): ToolContext {
  return {
    idempotencyKey: call.idempotencyKey,
    signal,
    state,
    threadId: ctx.threadId,
    messageId: call.messageId,
    toolCallId: call.call.id,
    attempt,
    runId: ctx.runId,
    userId: ctx.userId,
    logger: call.log,
  };
}
