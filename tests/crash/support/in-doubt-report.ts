import { Message } from "@tenxgraph/core";
import { decodeEnvelope } from "@tenxgraph/core/testing";
import type { AgentParams, PolicyName } from "./agent-params.js";
import type { CrashScene, StoredThread } from "./crash-scene.js";
import { TOOL_NAMES } from "./random-plan.js";
import { version1Key, version1Name } from "./graph-versions.js";

/** The `onInDoubt` policies of the chaos graph's tools, in the order the report lists them. */
export const IN_DOUBT_POLICIES: readonly PolicyName[] = ["retry", "fail", "interrupt", "reconcile"];

/** A policy of {@link IN_DOUBT_POLICIES}, or `"unknown"` for a warning that names none. */
export type PolicyCount = PolicyName | "unknown";

/** Where a run surfaced an in-doubt call: the runtime's IN DOUBT warning, as the worker relayed it. */
interface Surfaced {
  key: string;
  attempt: number;
  tool: string;
  /** The `onInDoubt` policy the tool was given in the run that warned (see {@link policyOf}). */
  policy: PolicyCount;
}

/** Every in-doubt call the scene's runs surfaced (a call's attempt counted once). */
export function surfacedInDoubt(scene: CrashScene): Surfaced[] {
  const seen = new Map<string, Surfaced>();
  for (const run of scene.runs) {
    for (const message of run.messages) {
      if (message.type !== "log" || message.level !== "warn") continue;
      if (!String(message.msg).includes("IN DOUBT")) continue;
      const tool = version1Name(String(message.tool));
      const call = {
        key: version1Key(String(message.key)),
        attempt: Number(message.attempt),
        tool,
        policy: policyOf(run.params, tool, message.policy),
      };
      seen.set(`${call.key}#${call.attempt}`, call);
    }
  }
  return [...seen.values()];
}

/**
 * The surfaced in-doubt calls counted by policy: every policy of {@link IN_DOUBT_POLICIES}, 0
 * when none; `"unknown"` only when a warning named neither a tool of the graph nor a policy.
 */
export function byPolicy(surfaced: readonly Surfaced[]): Partial<Record<PolicyCount, number>> {
  const counts: Partial<Record<PolicyCount, number>> = Object.fromEntries(
    IN_DOUBT_POLICIES.map((p) => [p, 0]),
  );
  for (const call of surfaced) counts[call.policy] = (counts[call.policy] ?? 0) + 1;
  return counts;
}

/**
 * A tool's `onInDoubt` as the worker built it (support-agent.ts: `params.policies`, default
 * `"retry"`). A warning naming no tool of the graph falls back to the policy the runtime named
 * in it (`"reconcile"` for a `{ reconcile }` object, as here).
 */
function policyOf(params: AgentParams, tool: string, warned: unknown): PolicyCount {
  const known = TOOL_NAMES.find((name) => name === tool);
  if (known) return params.policies?.[known] ?? "retry";
  return IN_DOUBT_POLICIES.find((p) => p === warned) ?? "unknown";
}

/**
 * In-doubt calls nobody was told about. A call that took effect at two attempts was in doubt
 * in between (its first attempt acted and was never recorded), and one that was settled without
 * running (`"fail"`'s TOOL_IN_DOUBT_001, a `reconcile` answer) was in doubt too: each must have
 * an IN DOUBT warning for its key, at an attempt in that span. Returns them, described.
 */
export function unsurfacedInDoubt(scene: CrashScene, stored: StoredThread): string[] {
  const surfaced = surfacedInDoubt(scene);
  const warned = (key: string, from: number, to: number) =>
    surfaced.some((s) => s.key === key && s.attempt >= from && s.attempt < to);
  const missing: string[] = [];
  // By ledger key, as the warnings name calls (a domain key is scoped by its tool there).
  for (const key of new Set(stored.effects.map((e) => e.ledgerKey))) {
    const attempts = [
      ...new Set(stored.effects.filter((e) => e.ledgerKey === key).map((e) => e.attempt)),
    ];
    attempts.sort((a, b) => a - b);
    attempts.slice(1).forEach((attempt, i) => {
      const before = attempts[i]!;
      if (!warned(key, before, attempt)) {
        missing.push(`${key} acted at attempts ${before} and ${attempt} with no IN DOUBT warning`);
      }
    });
  }
  for (const entry of stored.ledger) {
    if (entry.status !== "completed") continue;
    const decoded = decodeEnvelope(entry.result, "any");
    const settledInDoubt =
      decoded?.errorCode === "TOOL_IN_DOUBT_001" ||
      (decoded !== null && Message.text(decoded.message).startsWith("reconciled:"));
    if (settledInDoubt && !warned(entry.key, 0, Infinity)) {
      missing.push(`${entry.key} was settled in doubt with no IN DOUBT warning`);
    }
  }
  return missing;
}
