import { ClaimLostError } from "../errors/errors.js";
import type { ToolCallTrace } from "../events/tracing.js";
import type { ToolMessage } from "../messages/message.js";
import type { DeadlineScope } from "../node/deadline.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import { isInterruptSignal } from "../node/interrupt.js";
import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { HeldClaim } from "../node/run-watch.js";
import { awaitClaim } from "./await-claim.js";
import type { CallPlan } from "./call-plan.js";
import { messageEnvelope, type RecordedGoto, type ReplayedResult } from "./envelope.js";
import { resolveInDoubt } from "./in-doubt.js";
import type { LedgerCall } from "./ledger-call.js";
import { recordResult, releaseClaim, reportUnrecorded } from "./record.js";
import { toolErrorMessage } from "../messages/tool-result.js";

/** What running the tool once gave: the message the model reads, and what is recorded with it. */
export interface ToolRun {
  message: ToolMessage;
  /** The code of a failed call's message (`TOOL_ERROR_001`, `NODE_TIMEOUT_002`, …); `null` if it succeeded. */
  errorCode: string | null;
  /** State fields the call changed, recorded with the result so a replay applies them again. */
  changes: Record<string, unknown>;
  /** The call's `ctx.update` updates, in order, recorded with the result like `changes`. */
  updates: Record<string, unknown>[];
  /** Where its `Command` sent the run, recorded with the result too. */
  goto?: RecordedGoto;
}

/** The attempt the ledger hands to the tool layer to run. */
export interface CallAttempt {
  /** The attempt this execution claimed, or `null` when the call runs without the ledger. */
  readonly attempt: number | null;
  /**
   * The claim, heartbeated while the tool runs. Its `onLost` is for the runner to set (see
   * `abortOnLost`): a heartbeat that finds the claim taken over aborts the tool through it.
   */
  readonly held: HeldClaim | null;
  /** Set by the runner when the tool begins: a call stopped before it began is not in doubt. */
  started: boolean;
}

/** How the tool layer acts on a call. The ledger decides whether and when. */
export interface CallWork {
  /**
   * Runs the tool once, under its deadline. The tool's own failure is a result (a `ToolRun` with
   * an `errorCode`), recorded like any other. It throws only when there is nothing of this
   * attempt to record: paused in `interrupt()`, stopped, past the node's deadline, or its claim
   * taken over ({@link ClaimLostError}).
   */
  run(attempt: CallAttempt): Promise<ToolRun>;
  /** The context the tool's `reconcile(args, ctx)` gets for an attempt (a `ToolContext`). */
  context(attempt: number, scope: DeadlineScope): unknown;
  /**
   * Called once, when this call's tool returned: true when, a turn of the event loop later,
   * every sibling call of the node has returned or settled too. Then nothing is left to wait
   * for, and the results of this turn ride in the step's write, its very next commit; a result
   * that returned while a sibling still runs is recorded on its own (with the others of its
   * turn, in one commit).
   */
  returnedLast(): Promise<boolean>;
  /** The call's span: told when the call is found in doubt (see `resolveInDoubt`). */
  readonly trace?: ToolCallTrace;
}

/** How a call settled. */
export interface CallOutcome {
  message: ToolMessage;
  /** True when the result came from the ledger instead of running the tool. */
  replayed: boolean;
  /**
   * State fields the call changed. Run now, they are already in the state it ran on; replayed,
   * they are the recorded changes, for the caller to apply again.
   */
  changes: Record<string, unknown>;
  /**
   * The call's `ctx.update` updates, in order: run now or replayed, they are not applied yet
   * (the node applies every call's updates once all settled).
   */
  updates: Record<string, unknown>[];
  /** Where its `Command` sent the run, run now or replayed; the node goes there too. */
  goto?: RecordedGoto;
}

/**
 * The whole durable tool call, from its plan to its result: the ledger protocol in one place.
 * `planCalls` (claim.ts) made the plan by claiming the node's calls in one batch; from there:
 *
 * - `replay`: recorded before, so the recorded result is returned and the tool does not run.
 * - `settled`: answered without the tool (a conflict, or an answer recorded by policy).
 * - `in_doubt`: started by an execution that is gone and never recorded; the tool's
 *   `onInDoubt` policy decides (in-doubt.ts), which leads to `run` or `settled`.
 * - `wait`: a live execution holds the claim; its result is awaited (await-claim.ts).
 * - `run`: claimed (or unkeyed): the claim is heartbeated, `work.run` runs the tool, and the
 *   result is recorded for that attempt as soon as the tool returns, before the node goes on;
 *   the node's last result rides in the step's write instead, fenced the same way.
 *
 * The record is fenced by the attempt, so a zombie's result never overwrites the ledger
 * (record.ts). The tool itself is `work`'s: the ledger never imports a tool.
 */
export function durableCall(
  call: LedgerCall,
  plan: CallPlan,
  work: CallWork,
  ctx: NodeContext,
): Promise<CallOutcome> {
  // Most calls are claimed and run at once: no loop, and no async frame of its own around it.
  if (plan.kind === "run" && !ctx.runtime.nodeAbort.aborted)
    return runAndRecord(call, plan, work, ctx);
  return settleCall(call, plan, work, ctx);
}

/** {@link durableCall}'s way through replays, in-doubt policies and waits for another's claim. */
async function settleCall(
  call: LedgerCall,
  plan: CallPlan,
  work: CallWork,
  ctx: NodeContext,
): Promise<CallOutcome> {
  for (;;) {
    // A stopped or timed-out node's calls go no further, even when a ledger call returns late.
    const { nodeAbort } = ctx.runtime;
    if (nodeAbort.aborted) {
      // A claim won for a call that will not start now is handed back: it is not in doubt.
      if (plan.kind === "run" && plan.attempt !== null) {
        await releaseClaim(call, plan.attempt, ctx);
      }
      throw nodeAbort.reason;
    }
    switch (plan.kind) {
      case "replay":
        return replay(call, plan.result, ctx);
      case "settled":
        return { message: plan.message, replayed: false, changes: {}, updates: [] };
      case "in_doubt":
        plan = await resolveInDoubt(call, plan.entry, ctx, work.context, work.trace);
        break;
      case "wait":
        plan = await awaitClaim(call, plan.entry, ctx);
        break;
      case "run":
        return runAndRecord(call, plan, work, ctx);
    }
  }
}

/**
 * Runs the tool and records its result for the attempt that claimed it. The claim is
 * heartbeated from the moment it was won until its fate is written, so no other execution
 * takes a live call for abandoned while its record is on the way. The node's last result rides
 * in the step's write instead (see `StepLedger`), which then writes its fate.
 */
async function runAndRecord(
  call: LedgerCall,
  plan: Extract<CallPlan, { kind: "run" }>,
  work: CallWork,
  ctx: NodeContext,
): Promise<CallOutcome> {
  const { attempt } = plan;
  const held =
    plan.held ?? (attempt === null ? null : ctx.runtime.watch.hold({ key: call.key!, attempt }));
  let riding = false;
  try {
    const running: CallAttempt = { attempt, held, started: false };
    let ran: ToolRun;
    try {
      ran = await work.run(running);
    } catch (error) {
      // Taken over: the claim is the taker's, not this attempt's to release.
      if (error instanceof ClaimLostError) throw error;
      // Paused in interrupt(), or stopped before the tool began: not done, and not in doubt.
      // Stopped or past the node's deadline while it ran: the claim stays, in doubt.
      if ((isInterruptSignal(error) || !running.started) && attempt !== null) {
        await releaseClaim(call, attempt, ctx);
      }
      throw error;
    }
    // Fault points are for tests; without them, no `where` is made and no await taken.
    const { faultPoints } = ctx.runtime;
    const where = faultPoints && {
      threadId: ctx.threadId,
      runId: ctx.runId,
      node: ctx.node,
      toolName: call.tool.name,
      key: call.key,
    };
    if (where) await faultPoints.hit(FAULT_POINTS.TOOL_AFTER_RETURN, where);
    // Asked past the fault point: a call held there still counts as going for its siblings.
    const last = await work.returnedLast();
    if (attempt !== null) {
      const envelope = messageEnvelope(
        ran.message,
        ran.changes,
        call.origin,
        ran.errorCode,
        ran.updates,
        call.argsDigest,
        ran.goto,
      );
      const { stepLedger } = ctx.runtime;
      if (last && stepLedger.rides) {
        stepLedger.ride({
          completion: { attempt: { key: call.key!, attempt }, result: envelope },
          held,
          recordAlone: () => recordResult(call, attempt, envelope, ctx),
          reportUnrecorded: (error) => reportUnrecorded(call, attempt, error, ctx),
        });
        riding = true;
      } else {
        await recordResult(call, attempt, envelope, ctx);
        if (where) await faultPoints.hit(FAULT_POINTS.LEDGER_AFTER_RECORD, where);
      }
    }
    const { message, changes, updates, goto } = ran;
    return { message, replayed: false, changes, updates, ...(goto && { goto }) };
  } finally {
    if (!riding) held?.release();
  }
}

/** A recorded result, counted as a ledger hit; refused when the call was edited since it ran. */
function replay(call: LedgerCall, result: ReplayedResult, ctx: NodeContext): CallOutcome {
  if (editedSince(call, result)) return editedCall(call);
  ctx.runtime.metrics.ledgerHits.add(1, { tool: call.tool.name });
  call.log.info({ key: call.key, tool: call.tool.name }, "Tool call replayed from the ledger");
  // State changes and updates are applied again when this very call is replayed. A domain key
  // replaying a fact recorded by another turn's call must not roll fields back to that turn's
  // values, nor apply that turn's updates a second time.
  const ownResult = result.origin === undefined || result.origin === call.origin;
  return {
    message: result.message,
    replayed: true,
    changes: ownResult ? result.stateChanges : {},
    updates: ownResult ? (result.updates ?? []) : [],
    ...(ownResult && result.goto && { goto: result.goto }),
  };
}

/**
 * The record is this very call's (same message and call id) but was made with other arguments:
 * the assistant message was edited in place after the call ran. A result recorded by another
 * call (a domain key's fact) replays whatever its arguments, as the domain key declares; so
 * does one recorded before results carried a digest.
 */
function editedSince(call: LedgerCall, result: ReplayedResult): boolean {
  return (
    result.origin !== undefined &&
    result.origin === call.origin &&
    result.argsDigest !== undefined &&
    result.argsDigest !== call.argsDigest
  );
}

/**
 * An edited call settles with `TOOL_CONFLICT_003`, neither replayed nor run: the record answers
 * the old arguments (a charge of order 42 must not answer one of order 999), and running the
 * call would overwrite the record of a side effect that happened, so a fork back to the old
 * arguments would run that one again. The ledger is left as it is; a new call id runs anew.
 */
function editedCall(call: LedgerCall): CallOutcome {
  call.log.warn(
    { key: call.key, tool: call.tool.name, origin: call.origin },
    "Tool call was recorded with other arguments (its message was edited): neither replayed nor run",
  );
  const message = toolErrorMessage(
    call.tool.name,
    call.call.id,
    "TOOL_CONFLICT_003",
    `call '${call.origin}' was recorded with other arguments (its assistant message was edited ` +
      `after the call ran): the recorded result is not replayed and the edited call is not run; ` +
      `give the edited call a new call id to run it`,
  );
  return { message, replayed: false, changes: {}, updates: [] };
}
