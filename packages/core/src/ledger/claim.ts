import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { LedgerCall } from "./ledger-call.js";
import type { CallPlan } from "./call-plan.js";
import { decodeEnvelope, type ReplayedResult } from "./envelope.js";
import type { ClaimResult, LedgerClaim, LedgerEntry } from "../storage/ledger-entry.js";
import { adoptFormerKeys, isOwnTool } from "./former-keys.js";

type Pending =
  | CallPlan
  | { kind: "claim"; expectedAttempt: number }
  /** The first claim batch failed: the ledger is read for this call before anything runs. */
  | { kind: "claim_failed" };

/**
 * Decides every keyed call of a node from the ledger by claiming them in one batch (a single
 * transaction in SQL stores). Claiming first, rather than reading first, costs one round trip
 * on a fresh node, where every claim wins; a lost claim returns the entry that is there, which
 * is all a read would have said. Entries that must be claimed again at their attempt (a paused
 * call, a result that is not well-formed) get a second batch. Calls whose claims this run won
 * ahead, in the write of the step that issued them, need no claim at all.
 */
export async function planCalls(
  calls: readonly LedgerCall[],
  ctx: NodeContext,
): Promise<CallPlan[]> {
  await adoptFormerKeys(calls, ctx);
  const plans: Pending[] = calls.map((call) => {
    if (call.key === null) return { kind: "run", attempt: null };
    // Won in the write of the step that issued the call: nothing left to claim.
    const ahead = ctx.runtime.stepLedger.takeClaimAhead(call.key);
    if (ahead) return { kind: "run", attempt: ahead.attempt, held: ahead.held };
    return { kind: "claim", expectedAttempt: 0 };
  });
  await claimPlanned(calls, plans, ctx, planFromFirstClaim);
  await readWhereClaimsFailed(calls, plans, ctx);
  await claimPlanned(calls, plans, ctx, planFromClaim);
  return plans as CallPlan[];
}

/**
 * The first batch failed as a whole: the entries it would have returned are read instead, so
 * a call already recorded is still replayed and one in doubt still follows its tool's policy
 * (`"fail"` must not run the tool because the store refused a claim).
 */
async function readWhereClaimsFailed(
  calls: readonly LedgerCall[],
  plans: Pending[],
  ctx: NodeContext,
): Promise<void> {
  const failed = calls.flatMap((call, index) =>
    plans[index]!.kind === "claim_failed" ? [{ call, index }] : [],
  );
  if (failed.length === 0) return;
  const entries = await readEntries(
    failed.map(({ call }) => call),
    ctx,
  );
  for (const { call, index } of failed) {
    plans[index] = planFromEntry(call, entries.get(call.key!), ctx);
  }
}

/** Sends the calls whose plan is `claim` as one batch and replaces their plans with `decide`'s. */
async function claimPlanned(
  calls: readonly LedgerCall[],
  plans: Pending[],
  ctx: NodeContext,
  decide: (call: LedgerCall, result: ClaimResult | null, ctx: NodeContext) => Pending,
): Promise<void> {
  const toClaim = calls.flatMap((call, index) => {
    const plan = plans[index]!;
    return plan.kind === "claim" ? [{ index, call, expectedAttempt: plan.expectedAttempt }] : [];
  });
  if (toClaim.length === 0) return;
  const results = await claim(toClaim, ctx);
  toClaim.forEach(({ index, call }, i) => (plans[index] = decide(call, results[i]!, ctx)));
}

/** Claims one call (an in-doubt takeover, or after waiting) and says what to do next. */
export async function claimOne(
  call: LedgerCall,
  expectedAttempt: number,
  ctx: NodeContext,
): Promise<CallPlan> {
  const [result] = await claim([{ call, expectedAttempt }], ctx);
  return planFromClaim(call, result!, ctx);
}

/** A claim left by an execution that is gone: its lease expired, or it is a run here that ended. */
export function isAbandoned(entry: LedgerEntry, ctx: NodeContext): boolean {
  if (entry.status !== "started") return false;
  if (ctx.runtime.isEndedLocalRun(entry.ownerRunId)) return true;
  // The lease is the claimant's own, measured by the store's clock: a reader with a shorter
  // lease of its own, or a clock that disagrees, never takes a live claim for a dead one.
  return entry.leaseExpiresInMs < 0;
}

/** What an existing entry (or none) means for a call. */
export function planFromEntry(
  call: LedgerCall,
  entry: LedgerEntry | undefined,
  ctx: NodeContext,
): CallPlan | { kind: "claim"; expectedAttempt: number } {
  if (!entry) return { kind: "claim", expectedAttempt: 0 };
  if (!isOwnTool(entry.toolName, call, ctx)) return foreignEntry(call, entry);
  switch (entry.status) {
    case "completed": {
      const result = decodeEnvelope(entry.result, call.call.id);
      if (result && isUnknownOutcomeOfAnotherCall(result, call)) {
        // Another call's timeout (or unknown outcome) says nothing of whether the fact happened.
        return { kind: "in_doubt", entry };
      }
      if (result && isFailureOfAnotherCall(result, call)) {
        // A domain key stands for a business fact; a failure means the fact did not happen,
        // so a later call asking for it runs the tool instead of inheriting the old error.
        call.log.info(
          { key: entry.key, tool: entry.toolName, origin: result.origin },
          "Ledger holds a failure recorded by another call: the tool runs again for this call",
        );
        return { kind: "claim", expectedAttempt: entry.attempt };
      }
      if (result) return { kind: "replay", result };
      call.log.warn(
        { key: entry.key, tool: entry.toolName },
        "Ledger entry is not a well-formed result: treated as no record, the tool runs",
      );
      return { kind: "claim", expectedAttempt: entry.attempt };
    }
    case "interrupted":
      return { kind: "claim", expectedAttempt: entry.attempt };
    case "started":
      return isAbandoned(entry, ctx) ? { kind: "in_doubt", entry } : { kind: "wait", entry };
  }
}

/**
 * The call's key holds another tool's entry (a message key equal to a scoped domain key, or a
 * store written by hand). Its result is never this call's, nor is its claim: the call runs
 * without ledger protection (at least once), and says so, as an unkeyed call does.
 */
function foreignEntry(call: LedgerCall, entry: LedgerEntry): CallPlan {
  call.log.warn(
    { key: entry.key, tool: call.tool.name, recordedBy: entry.toolName },
    "Ledger entry under this call's key belongs to another tool: never used for this call, " +
      "which runs without ledger protection (at least once)",
  );
  return { kind: "run", attempt: null };
}

/**
 * Only a tool's own failure says the fact did not happen. A timeout or an in-doubt answer
 * leaves the outcome unknown, so it is replayed rather than risked twice.
 */
function isUnknownOutcomeOfAnotherCall(result: ReplayedResult, call: LedgerCall): boolean {
  return (
    (result.errorCode === "NODE_TIMEOUT_002" || result.errorCode === "TOOL_IN_DOUBT_001") &&
    result.origin !== undefined &&
    result.origin !== call.origin
  );
}

function isFailureOfAnotherCall(result: ReplayedResult, call: LedgerCall): boolean {
  return (
    result.errorCode === "TOOL_ERROR_001" &&
    result.origin !== undefined &&
    result.origin !== call.origin
  );
}

/** After a first claim: a loss means the call has an entry, which decides, as a read would. */
function planFromFirstClaim(
  call: LedgerCall,
  result: ClaimResult | null,
  ctx: NodeContext,
): Pending {
  if (result === null) return { kind: "claim_failed" };
  if (result.won) return planFromClaim(call, result, ctx);
  return planFromEntry(call, result.entry, ctx);
}

async function readEntries(
  calls: readonly LedgerCall[],
  ctx: NodeContext,
): Promise<Map<string, LedgerEntry>> {
  const keys = [...new Set(calls.flatMap((call) => (call.key === null ? [] : [call.key])))];
  try {
    const entries = await ctx.runtime.checkpointer.getCalls(ctx.threadId, keys);
    return new Map(entries.map((entry) => [entry.key, entry]));
  } catch (error) {
    ctx.logger.error(
      { err: error, keys },
      "Tool ledger read failed: treated as no record, the tools run (at least once)",
    );
    return new Map();
  }
}

function planFromClaim(call: LedgerCall, result: ClaimResult | null, ctx: NodeContext): CallPlan {
  // The claim itself failed: run without ledger protection, as the read-failure rule does.
  if (result === null) return { kind: "run", attempt: null };
  if (result.won) return { kind: "run", attempt: result.attempt };
  const next = planFromEntry(call, result.entry, ctx);
  // Lost the race to an entry that is not running any more: try once more to wait on it.
  return next.kind === "claim" ? { kind: "wait", entry: result.entry } : next;
}

async function claim(
  requests: readonly { call: LedgerCall; expectedAttempt: number }[],
  ctx: NodeContext,
): Promise<(ClaimResult | null)[]> {
  const claims: LedgerClaim[] = requests.map(({ call, expectedAttempt }) => ({
    key: call.key!,
    toolName: call.recordedToolName,
    ownerRunId: ctx.runId,
    leaseMs: ctx.runtime.claimStaleAfterMs,
    expectedAttempt,
  }));
  try {
    return await ctx.runtime.checkpointer.claimCalls(ctx.threadId, claims);
  } catch (error) {
    ctx.logger.error(
      { err: error, keys: claims.map((c) => c.key) },
      "Tool ledger claim failed: the tools run without ledger protection (at least once)",
    );
    return requests.map(() => null);
  }
}
