import { context } from "@opentelemetry/api";
import { NodeTimeoutError, errorText } from "../errors/errors.js";
import type { ToolCallTrace } from "../events/tracing.js";
import type { ErrorCode } from "../errors/codes.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { BaseState } from "../definition/reducers.js";
import { abortOnLost } from "../ledger/abort-on-lost.js";
import type { CallPlan } from "../ledger/call-plan.js";
import {
  durableCall,
  type CallAttempt,
  type CallOutcome,
  type ToolRun,
} from "../ledger/durable-call.js";
import { toolTimeoutMs } from "../ledger/tool-timeout.js";
import type { ToolMessage } from "../messages/message.js";
import { toolErrorMessage, toToolMessage } from "../messages/tool-result.js";
import { runWithDeadline, type DeadlineScope } from "../node/deadline.js";
import { isInterruptSignal, withInterruptScope } from "../node/interrupt.js";
import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import { CallUpdates } from "./call-updates.js";
import { commandResult } from "./tool-command.js";
import { isCommand } from "../definition/command.js";
import { changedFields } from "../definition/branch-merge.js";
import type { ReadyCall } from "./prepared-call.js";
import type { ToolContext } from "./tool-context.js";

/** The state one call works on, and the field values it started from. */
export interface Branch<S extends BaseState> {
  state: S;
  baseline: Record<string, unknown>;
}

/**
 * Carries one call from its plan to a result through the ledger ({@link durableCall}), which
 * calls back here to run the tool. Runs inside the call's interrupt scope, so `interrupt()` in
 * the tool (or the in-doubt policy) gets an id derived from this call.
 */
export function executeCall<S extends BaseState>(
  call: ReadyCall,
  plan: CallPlan,
  branch: Branch<S>,
  ctx: NodeContext,
  /** Marks the call's tool as returned: true when no sibling is still going (see `CallWork`). */
  returnedLast: () => Promise<boolean>,
): Promise<CallOutcome> {
  return withInterruptScope(
    {
      idBase: call.interruptBase,
      node: ctx.node,
      toolCallId: call.call.id,
      answers: ctx.runtime.resumeAnswers,
    },
    async () => {
      const trace = ctx.runtime.tracing.startToolCall(ctx.runtime.traceContext, call);
      let outcome: CallOutcome;
      try {
        outcome = await durableCall(
          call,
          plan,
          {
            run: (attempt) => runTool(call, attempt, branch, ctx, trace),
            // A reconcile's answer is recorded without state: what it updates is not applied.
            context: (attempt, scope) =>
              toolContext(call, attempt, scope, branch.state, reconcileUpdates(call), ctx),
            returnedLast,
            trace,
          },
          ctx,
        );
      } catch (error) {
        traceThrown(trace, error);
        throw error;
      }
      trace.settled(outcome.replayed, outcome.message.isError === true, outcome.message.content);
      return outcome.replayed ? replayInto(branch, call, outcome) : outcome;
    },
  );
}

/** Paused in `interrupt()` is no failure; a claim taken over is the call `fenced`. */
function traceThrown(trace: ToolCallTrace, error: unknown): void {
  if (isInterruptSignal(error)) {
    if (trace.recording) trace.span.setAttribute("tenxgraph.tool.outcome", "interrupted");
    trace.end();
  } else {
    trace.thrown(error, isTenxgraphError(error, "TOOL_CONFLICT_002"));
  }
}

/**
 * Applies a replayed result to the call's branch: its recorded state changes, and its message.
 * Its recorded updates stay in the outcome: the node applies them with every other call's.
 */
function replayInto<S extends BaseState>(
  branch: Branch<S>,
  call: ReadyCall,
  outcome: CallOutcome,
): CallOutcome {
  Object.assign(branch.state, structuredClone(outcome.changes));
  // A fact recorded for an earlier turn whose call had the same id (providers reuse `call_1`)
  // is already in the transcript, where re-appending it is a no-op that would leave this call
  // unanswered. Answer with a new message.
  const recorded = outcome.message;
  const message = branch.state.messages.some((m) => m.id === recorded.id)
    ? toToolMessage(recorded, call.call.id)
    : recorded;
  return { ...outcome, message };
}

/**
 * The tool itself, under its deadline: its message, the error code when it failed, the state
 * fields it changed and the updates it made (none when it failed: a failed call's half-made
 * changes and updates are dropped with it). If a heartbeat finds the claim taken over while the tool runs, its signal is
 * aborted and the call fails out of the node: this execution is a zombie, and its outcome is
 * the taker's to record.
 */
async function runTool<S extends BaseState>(
  call: ReadyCall,
  running: CallAttempt,
  branch: Branch<S>,
  ctx: NodeContext,
  trace: ToolCallTrace,
): Promise<ToolRun> {
  const { attempt, held } = running;
  const timeoutMs = toolTimeoutMs(call, ctx);
  const started = performance.now();
  const updates = new CallUpdates(call.tool.name, call.log);
  try {
    const output = await runWithDeadline(
      (scope) => {
        running.started = true;
        trace.running(attempt);
        // The tool runs in its span's context: spans it starts are the call's children.
        return context.with(trace.context, () =>
          call.tool.execute(
            call.args,
            toolContext(call, attempt ?? 0, scope, branch.state, updates, ctx),
          ),
        );
      },
      {
        parent: ctx.runtime.nodeAbort,
        timeoutMs,
        onTimeout: () => new NodeTimeoutError("tool", call.tool.name, (timeoutMs ?? 0) / 1000),
        abortHandle: held ? (abort) => (held.onLost = abortOnLost(call, abort)) : undefined,
      },
    );
    // LangGraph.js's habit: a tool returns `new Command({ update })` to update the state.
    const { message, goto } = isCommand(output)
      ? commandResult(output, call.tool.name, call.call.id, updates)
      : { message: toToolMessage(output, call.call.id), goto: [] };
    const changes = changedFields(branch.baseline, branch.state);
    const recorded = { message, errorCode: null, changes, updates: updates.close() };
    return goto.length > 0 ? { ...recorded, goto } : recorded;
  } catch (error) {
    // Taken over, paused in interrupt(), stopped, or past the node's deadline: nothing of this
    // attempt is told to the model; the ledger decides what becomes of its claim.
    if (
      isTenxgraphError(error, "TOOL_CONFLICT_002") ||
      isInterruptSignal(error) ||
      ctx.runtime.nodeAbort.aborted
    ) {
      throw error;
    }
    return { ...failure(call, error, ctx), changes: {}, updates: [] };
  } finally {
    updates.close();
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
  updates: CallUpdates,
  ctx: NodeContext,
): ToolContext {
  return {
    idempotencyKey: call.idempotencyKey,
    get signal() {
      return scope.signal;
    },
    state,
    update: (update) => updates.add(update),
    threadId: ctx.threadId,
    messageId: call.messageId,
    toolCallId: call.call.id,
    attempt,
    runId: ctx.runId,
    userId: ctx.userId,
    logger: call.log,
    write: (data) => ctx.write(data),
    store: ctx.store,
  };
}

/** The updates of a `reconcile(args, ctx)`: closed from the start, so each is dropped with a warning. */
function reconcileUpdates(call: ReadyCall): CallUpdates {
  const updates = new CallUpdates(call.tool.name, call.log);
  updates.close();
  return updates;
}
