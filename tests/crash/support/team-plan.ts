import type { AgentParams, PolicyName, TeamPlan, ToolName } from "./agent-params.js";
import { between, pick, type Rng } from "./prng.js";
import type { KillKind } from "./random-plan.js";
import { TOOL_NAMES } from "./random-plan.js";

/** One scenario of a team (team-agent.ts): the orders, the tools' policies, approvals or not. */
export interface TeamScenario {
  threadId: string;
  team: TeamPlan;
  policies: Partial<Record<ToolName, PolicyName>>;
  approval: boolean;
}

/** "retry" twice as often: it is the default, and the one that runs a call again. */
const POLICIES: readonly PolicyName[] = ["retry", "retry", "fail", "reconcile", "interrupt"];
/** A team's run takes a few hundred milliseconds after its first write: kills land all over it. */
const ANYTIME_MAX_MS = 300;
/** A team writes its parent and each child's steps: a step kill aims at one of the first few. */
const MAX_STEP_HIT = 6;

/** A random team: two or three charges, a receipt for each, per-tool policies, maybe approvals. */
export function planTeam(rng: Rng, seed: number, threadId = `team-${seed}`): TeamScenario {
  const billing = Array.from({ length: between(rng, 2, 3) }, (_, i) => ({
    order_id: `${seed}-${i}`,
    amount_cents: between(rng, 100, 9999),
  }));
  return {
    threadId,
    team: { billing, mail: billing.map((order) => order.order_id) },
    policies: Object.fromEntries(TOOL_NAMES.map((name) => [name, pick(rng, POLICIES)])),
    approval: rng() < 0.25,
  };
}

/** How many calls the team makes in all: a lookup and a charge per order, and the receipts. */
export function teamCalls(team: TeamPlan): number {
  return team.billing.length * 2 + team.mail.length;
}

/**
 * A kill of `kind` in a team: at a tool's fault point (any of the branches' calls of that
 * tool), at one of the next step writes of any of its threads, hung in a tool, or anytime.
 */
export function randomTeamKill(
  rng: Rng,
  team: TeamPlan,
  kind: KillKind,
): Pick<AgentParams, "kill" | "hang" | "outsideKillMs"> {
  if (kind === "anytime") return { outsideKillMs: between(rng, 0, ANYTIME_MAX_MS) };
  if (kind === "step.before_write" || kind === "step.after_write") {
    return { kill: { point: kind, hit: between(rng, 1, MAX_STEP_HIT) } };
  }
  const tool = pick(rng, TOOL_NAMES);
  if (kind === "hang") return { hang: tool };
  const calls = tool === "send_receipt" ? team.mail.length : team.billing.length;
  return { kill: { point: kind, tool, hit: between(rng, 1, calls) } };
}

/** The scenario in a line, for a failure's trace. */
export function describeTeam(scenario: TeamScenario): string {
  const charges = scenario.team.billing.map((o) => o.order_id).join(", ");
  const approval = scenario.approval ? "; approval" : "";
  return `team: charges ${charges}; policies ${JSON.stringify(scenario.policies)}${approval}`;
}
