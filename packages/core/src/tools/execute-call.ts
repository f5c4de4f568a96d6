import { NodeTimeoutError, errorText } from "../errors/errors.js";
import type { ErrorCode } from "../errors/codes.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { BaseState } from "../graph/reducers.js";
import type { ToolMessage } from "../messages/message.js";
import { awaitClaim } from "../ledger/await-claim.js";
import type { CallPlan } from "../ledger/call-plan.js";
import { messageEnvelope, type ReplayedResult } from "../ledger/envelope.js";
import { resolveInDoubt } from "../ledger/in-doubt.js";
import { recordResult, releaseClaim } from "../ledger/record.js";
import { runWithDeadline, type DeadlineScope } from "../runtime/deadline.js";
import { FAULT_POINTS } from "../runtime/fault-points.js";
import { isInterruptSignal, withInterruptScope } from "../runtime/interrupt.js";
import type { InternalNodeContext as NodeContext } from "../runtime/node-context.js";
import type { HeldClaim } from "../runtime/run-watch.js";
import { abortOnLost } from "../ledger/abort-on-lost.js";
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
    // A stopped or timed-out node's calls go no further, even when a ledger call returns late.
    if (ctx.signal.aborted) {
      // A claim won for a call that will not start now is handed back: it is not in doubt.
      if (plan.kind === "run" && plan.attempt !== null) {
        await releaseClaim(call, plan.attempt, ctx);
      }
      throw ctx.signal.reason;
    }
    switch (plan.kind) {
      case "replay":
        return replay(call, plan.result, branch, ctx);
      case "settled":
        return { message: plan.message, replayed: false, changes: {} };
      case "run":
        return runTool(call, plan.attempt, branch, ctx);
      case "in_doubt":
        plan = await resolveInDoubt(call, plan.entry, ctx, (attempt, scope) =>
          toolContext(call, attempt, scope, branch.state, ctx),
        );
        break;
      case "wait":
        plan = await awaitClaim(call, plan.entry, ctx);
        break;
    }
  }
}

function replay<S extends BaseState>(
  call: ReadyCall,
  result: ReplayedResult,
  branch: Branch<S>,
  ctx: NodeContext,
): CallOutcome {
  ctx.runtime.metrics.ledgerHits.add(1, { tool: call.tool.name });
  call.log.info({ key: call.key, tool: call.tool.name }, "Tool call replayed from the ledger");
  // State changes are re-applied when this very call is replayed. A domain key replaying a
  // fact recorded by another turn's call must not roll fields back to that turn's values.
  const ownResult = result.origin === undefined || result.origin === call.origin;
  const changes = ownResult ? result.stateChanges : {};
  Object.assign(branch.state, structuredClone(changes));
  // A fact recorded for an earlier turn whose call had the same id (providers reuse `call_1`)
  // is already in the transcript, where re-appending it is a no-op that would leave this call
  // unanswered. Answer with a new message.
  const recorded = result.message;
  const message = branch.state.messages.some((m) => m.id === recorded.id)
    ? toToolMessage(recorded, call.call.id)
    : recorded;
  return { message, replayed: true, changes };
}

/**
 * Runs the tool under its deadline and records the result as soon as it returns, before the
 * node goes on. The claim is heartbeated from the moment it was won until its fate is written,
 * so no other execution takes a live call for abandoned while its record is on the way.
 */
async function runTool<S extends BaseState>(
  call: ReadyCall,
  attempt: number | null,
  branch: Branch<S>,
  ctx: NodeContext,
): Promise<CallOutcome> {
  const held = attempt === null ? null : ctx.runtime.watch.hold({ key: call.key!, attempt });
  try {
    const { message, errorCode } = await execute(call, attempt, held, branch, ctx);
    // A failed call's half-made state changes are dropped with it.
    const changes = errorCode ? {} : changedFields(branch.baseline, branch.state);
    const where = {
      threadId: ctx.threadId,
      runId: ctx.runId,
      node: ctx.node,
      toolName: call.tool.name,
      key: call.key,
    };
    await ctx.runtime.faultPoints?.hit(FAULT_POINTS.TOOL_AFTER_RETURN, where);
    if (attempt !== null) {
      const envelope = messageEnvelope(message, changes, call.origin, errorCode);
      await recordResult(call, attempt, envelope, ctx);
      await ctx.runtime.faultPoints?.hit(FAULT_POINTS.LEDGER_AFTER_RECORD, where);
    }
    return { message, replayed: false, changes };
  } finally {
    held?.release();
  }
}

/**
 * The tool itself, under its deadline: its message, and the error code when it failed. If a
 * heartbeat finds the claim taken over while the tool runs, its signal is aborted and the call
 * fails out of the node: this execution is a zombie, and its outcome is the taker's to record.
 */
async function execute<S extends BaseState>(
  call: ReadyCall,
  attempt: number | null,
  held: HeldClaim | null,
  branch: Branch<S>,
  ctx: NodeContext,
): Promise<{ message: ToolMessage; errorCode: ErrorCode | null }> {
  const timeoutMs = toolTimeoutMs(call, ctx);
  const started = performance.now();
  let entered = false;
  try {
    const output = await runWithDeadline(
      (scope) => {
        entered = true;
        return call.tool.execute(
          call.args,
          toolContext(call, attempt ?? 0, scope, branch.state, ctx),
        );
      },
      {
        parent: ctx.signal,
        timeoutMs,
        onTimeout: () => new NodeTimeoutError("tool", call.tool.name, (timeoutMs ?? 0) / 1000),
        abortHandle: held ? (abort) => (held.onLost = abortOnLost(call, abort)) : undefined,
      },
    );
    return { message: toToolMessage(output, call.call.id), errorCode: null };
  } catch (error) {
    // Taken over: not this attempt's to record, nor to tell the model about (the taker will).
    if (isTenxgraphError(error, "TOOL_CONFLICT_002")) throw error;
    // Paused in interrupt(), or stopped before the tool began: not done, and not in doubt.
    const notDone = isInterruptSignal(error) || !entered;
    if (notDone && attempt !== null) await releaseClaim(call, attempt, ctx);
    // Stop or the node's deadline: the node's result is discarded and the claim stays in doubt.
    if (isInterruptSignal(error) || ctx.signal.aborted) throw error;
    return failure(call, error, ctx);
  } finally {
    if (held) held.onLost = undefined;
    ctx.runtime.metrics.toolDuration.record(performance.now() - started, { tool: call.tool.name });
  }
}

function failure(
  call: ReadyCall,
  error: unknown,
  ctx: NodeContext,
): { message: ToolMessage; errorCode: ErrorCode } {
  const tool = call.tool.name;
  if (isTenxgraphError(error) && error.code.startsWith("NODE_TIMEOUT_")) {
    ctx.runtime.metrics.toolTimeouts.add(1, { tool });
    call.log.warn({ tool, key: call.key }, error.message);
    const code = "NODE_TIMEOUT_002";
    return { message: toolErrorMessage(tool, call.call.id, code, error.message), errorCode: code };
  }
  ctx.runtime.metrics.toolErrors.add(1, { tool });
  const text = errorText(error);
  call.log.warn({ tool, key: call.key, err: error }, `Tool failed: ${text}`);
  const code =
    isTenxgraphError(error) && error.code.startsWith("TOOL_") ? error.code : "TOOL_ERROR_001";
  return { message: toolErrorMessage(tool, call.call.id, code, text), errorCode: code };
}

function toolContext<S extends BaseState>(
  call: ReadyCall,
  attempt: number,
  scope: DeadlineScope,
  state: S,
  ctx: NodeContext,
): ToolContext {
  return {
    idempotencyKey: call.idempotencyKey,
    get signal() {
      return scope.signal;
    },
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
