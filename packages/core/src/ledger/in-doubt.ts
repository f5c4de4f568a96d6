import { NodeTimeoutError, errorText } from "../errors/errors.js";
import type { ToolCallTrace } from "../events/tracing.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { ToolMessage } from "../messages/message.js";
import { runWithDeadline, type DeadlineScope } from "../node/deadline.js";
import {
  IN_DOUBT_INTERRUPT_KIND,
  parseInDoubtDecision,
  type InDoubtDecision,
} from "../node/in-doubt-decision.js";
import { interrupt, isInterruptSignal } from "../node/interrupt.js";
import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { HeldClaim } from "../node/run-watch.js";
import type { LedgerCall } from "./ledger-call.js";
import { toolErrorMessage, toToolMessage } from "../messages/tool-result.js";
import { toolTimeoutMs } from "./tool-timeout.js";
import { abortOnLost } from "./abort-on-lost.js";
import type { CallPlan } from "./call-plan.js";
import { claimOne } from "./claim.js";
import { messageEnvelope } from "./envelope.js";
import type { LedgerEntry } from "../storage/ledger-entry.js";
import { recordResult } from "./record.js";

/**
 * A call was claimed by an execution that is gone and never recorded: it may or may not have
 * taken effect. The tool's `onInDoubt` policy decides; whatever it decides is claimed first
 * (a compare-and-swap on the dead attempt), so two resuming executions cannot both act on it.
 * If the claim itself fails, the decision still holds: it is carried out without the ledger.
 */
export async function resolveInDoubt(
  call: LedgerCall,
  entry: LedgerEntry,
  ctx: NodeContext,
  toolContext: (attempt: number, scope: DeadlineScope) => unknown,
  trace?: ToolCallTrace,
): Promise<CallPlan> {
  const decision = decide(call, entry, ctx, trace);
  const taken = await claimOne(call, entry.attempt, ctx);
  if (taken.kind !== "run") return taken; // another execution took it over first
  const { attempt } = taken;
  const held = attempt === null ? null : ctx.runtime.watch.hold({ key: call.key!, attempt });
  try {
    const outcome = await act(call, decision, attempt, held, ctx, toolContext);
    if (outcome.kind === "run") return taken;
    if (attempt !== null) {
      const envelope = messageEnvelope(
        outcome.message,
        {},
        call.origin,
        outcome.errorCode,
        [],
        call.argsDigest,
      );
      await recordResult(call, attempt, envelope, ctx);
    }
    return { kind: "settled", message: outcome.message };
  } finally {
    held?.release();
  }
}

/** What the policy says, counted and logged once (for `"interrupt"`: when first asked). */
type Decision =
  | { action: "retry" }
  | { action: "fail"; why: string }
  | { action: "complete"; result: unknown }
  | { action: "reconcile"; reconcile: (args: unknown, ctx: unknown) => unknown };

function decide(
  call: LedgerCall,
  entry: LedgerEntry,
  ctx: NodeContext,
  trace: ToolCallTrace | undefined,
): Decision {
  const policy = call.tool.onInDoubt;
  const policyName = typeof policy === "string" ? policy : "reconcile";
  const report = () => {
    trace?.inDoubt(entry.attempt, policyName);
    ctx.runtime.metrics.inDoubt.add(1, { tool: call.tool.name, policy: policyName });
    ctx.emit({
      type: "tool_in_doubt",
      node: ctx.node,
      key: entry.key,
      toolCallId: call.call.id,
      toolName: call.tool.name,
      attempt: entry.attempt,
      policy: policyName,
    });
    call.log.warn(
      { key: entry.key, tool: call.tool.name, attempt: entry.attempt, policy: policyName },
      "Tool call is IN DOUBT: it started but was never recorded, so it may or may not have taken effect",
    );
  };
  if (policy !== "interrupt") report();
  if (policy === "retry") return { action: "retry" };
  if (policy === "fail") {
    return { action: "fail", why: `attempt ${entry.attempt} started but was never recorded` };
  }
  if (typeof policy === "object") return { action: "reconcile", reconcile: policy.reconcile };
  let answer: InDoubtDecision;
  try {
    answer = askHuman(call, entry);
  } catch (signal) {
    if (isInterruptSignal(signal)) report();
    throw signal;
  }
  call.log.info({ key: entry.key, action: answer.action }, "In-doubt tool call answered");
  if (answer.action === "fail") {
    return { action: "fail", why: answer.reason ?? "a human marked it failed" };
  }
  return answer;
}

/** Carries out a decision: run the tool, or settle the call with a message. */
async function act(
  call: LedgerCall,
  decision: Decision,
  attempt: number | null,
  held: HeldClaim | null,
  ctx: NodeContext,
  toolContext: (attempt: number, scope: DeadlineScope) => unknown,
): Promise<{ kind: "run" } | { kind: "settle"; message: ToolMessage; errorCode: string | null }> {
  switch (decision.action) {
    case "retry":
      return { kind: "run" };
    case "complete":
      return {
        kind: "settle",
        message: toToolMessage(decision.result, call.call.id),
        errorCode: null,
      };
    case "fail":
      return {
        kind: "settle",
        message: inDoubtFailure(call, decision.why),
        errorCode: "TOOL_IN_DOUBT_001",
      };
    case "reconcile": {
      const reconciled = await reconcile(
        call,
        decision.reconcile,
        attempt ?? 0,
        held,
        ctx,
        toolContext,
      );
      if (reconciled.kind === "did_not_happen") return { kind: "run" };
      return { kind: "settle", message: reconciled.message, errorCode: reconciled.errorCode };
    }
  }
}

function askHuman(call: LedgerCall, entry: LedgerEntry): InDoubtDecision {
  const answer = interrupt(
    {
      kind: IN_DOUBT_INTERRUPT_KIND,
      tool: call.tool.name,
      arguments: call.args,
      key: entry.key,
      attempt: entry.attempt,
    },
    {
      // One question per attempt: an answer about attempt n (say "retry") must never decide
      // attempt n + 1 when that one falls in doubt too, or the call runs again unasked.
      id: `in-doubt-${entry.attempt}`,
      message:
        `Tool '${call.tool.name}' started but its result was never recorded: it may or may not have ` +
        `taken effect. Answer { action: "retry" }, { action: "complete", result } or { action: "fail" }.`,
    },
  );
  return parseInDoubtDecision(answer);
}

async function reconcile(
  call: LedgerCall,
  fn: (args: unknown, ctx: unknown) => unknown,
  attempt: number,
  held: HeldClaim | null,
  ctx: NodeContext,
  toolContext: (attempt: number, scope: DeadlineScope) => unknown,
): Promise<
  { kind: "did_not_happen" } | { kind: "happened"; message: ToolMessage; errorCode: string | null }
> {
  const timeoutMs = toolTimeoutMs(call, ctx);
  try {
    const value = await runWithDeadline((scope) => fn(call.args, toolContext(attempt, scope)), {
      parent: ctx.runtime.nodeAbort,
      timeoutMs,
      onTimeout: () => new NodeTimeoutError("tool", call.tool.name, (timeoutMs ?? 0) / 1000),
      // Taken over while asking: the taker decides now, and this answer must not be acted on.
      abortHandle: held ? (abort) => (held.onLost = abortOnLost(call, abort)) : undefined,
    });
    if (value === undefined) return { kind: "did_not_happen" };
    return { kind: "happened", message: toToolMessage(value, call.call.id), errorCode: null };
  } catch (error) {
    if (ctx.runtime.nodeAbort.aborted || isTenxgraphError(error, "TOOL_CONFLICT_002")) throw error;
    const message = `reconcile() failed, outcome still unknown: ${errorText(error)}`;
    return {
      kind: "happened",
      message: toolErrorMessage(call.tool.name, call.call.id, "TOOL_IN_DOUBT_001", message),
      errorCode: "TOOL_IN_DOUBT_001",
    };
  } finally {
    if (held) held.onLost = undefined;
  }
}

function inDoubtFailure(call: LedgerCall, why: string): ToolMessage {
  return toolErrorMessage(
    call.tool.name,
    call.call.id,
    "TOOL_IN_DOUBT_001",
    `outcome unknown: ${why}; it may or may not have taken effect, so check before calling it again`,
  );
}
