import type { AgentParams } from "../crash/support/agent-params.js";
import type { CrashScene, StoredThread } from "../crash/support/crash-scene.js";
import { unsurfacedInDoubt } from "../crash/support/in-doubt-report.js";
import type { Rng } from "../crash/support/prng.js";
import { planScenario, randomKill, type KillKind } from "../crash/support/random-plan.js";
import { checkTeamInvariants, unsurfacedInTeam } from "../crash/support/team-invariants.js";
import { describeTeam, planTeam, randomTeamKill, teamCalls } from "../crash/support/team-plan.js";
import { checkInvariants, type CheckOptions } from "../crash/support/thread-invariants.js";
import type { ChaosBreak } from "./chaos-tally.js";

/** The graph a chaos run works: the support agent, or the team of subgraph workers. */
export type ChaosGraph = "support" | "team";

export const CHAOS_GRAPHS: readonly ChaosGraph[] = ["support", "team"];

/**
 * One scenario's graph and what the run needs to know of it: the scene to build, how to aim a
 * kill, the invariants after every wave, and what must hold once it completed. `Stored` is
 * what the checks read (one thread, or a team's parent and children).
 */
export interface Workload<Stored> {
  scene: Pick<AgentParams, "threadId" | "rounds" | "answer" | "team">;
  policies: AgentParams["policies"];
  approval: boolean;
  description: string;
  kill(rng: Rng, stored: Stored | null, kind: KillKind): Partial<AgentParams>;
  check(scene: CrashScene, previous: Stored | null, options: CheckOptions): Promise<Stored>;
  /** The thread the client works: what a wave's processes send, continue or answer. */
  parent(stored: Stored): StoredThread;
  /** What is wrong with a completed scenario, if anything. */
  finalBreak(scene: CrashScene, stored: Stored): { broke: ChaosBreak; message: string } | null;
}

/** The workload of `graph` for the scenario `seed` (drawing its plan from `rng`). */
export function workloadOf(graph: ChaosGraph, rng: Rng, seed: number): Workload<unknown> {
  return (
    graph === "team" ? teamWorkload(rng, seed) : supportWorkload(rng, seed)
  ) as Workload<unknown>;
}

/** The support agent: one or two rounds of parallel calls on one thread (random-plan.ts). */
function supportWorkload(rng: Rng, seed: number): Workload<StoredThread> {
  const plan = { ...planScenario(rng, seed), threadId: `chaos-${seed}` };
  const rounds = plan.rounds.map((calls) => calls.map((c) => c.name).join("+")).join(" | ");
  const approval = plan.approval ? "; approval" : "";
  return {
    scene: plan,
    policies: plan.policies,
    approval: plan.approval,
    description: `${rounds}; policies ${JSON.stringify(plan.policies)}${approval}`,
    kill: (rng, stored, kind) => randomKill(rng, plan, stored, kind),
    check: checkInvariants,
    parent: (stored) => stored,
    finalBreak(scene, stored) {
      const calls = plan.rounds.flat().length;
      if (stored.ledger.length !== calls) {
        return {
          broke: "finish",
          message: `${stored.ledger.length} ledger entries, ${calls} calls`,
        };
      }
      const unsurfaced = unsurfacedInDoubt(scene, stored);
      return unsurfaced.length > 0 ? { broke: "unsurfaced", message: unsurfaced.join("\n") } : null;
    },
  };
}

/** The team: a supervisor's Send fan-out to subgraph workers, on child threads (team-agent.ts). */
function teamWorkload(rng: Rng, seed: number) {
  const plan = planTeam(rng, seed, `chaos-team-${seed}`);
  const workload: Workload<Awaited<ReturnType<typeof checkTeamInvariants>>> = {
    scene: { threadId: plan.threadId, rounds: [], answer: "", team: plan.team },
    policies: plan.policies,
    approval: plan.approval,
    description: describeTeam(plan),
    kill: (rng, _stored, kind) => randomTeamKill(rng, plan.team, kind),
    check: (scene, previous, options) =>
      checkTeamInvariants(scene, previous, {
        ...options,
        plan: plan.team,
        label: options.label ?? "",
      }),
    parent: (stored) => stored.parent,
    finalBreak(scene, stored) {
      // checkTeamInvariants counted the entries when the team finished; what is left is news.
      const entries = [...stored.children.values()].flatMap((child) => child.ledger).length;
      if (entries !== teamCalls(plan.team)) {
        return {
          broke: "finish",
          message: `${entries} ledger entries, ${teamCalls(plan.team)} calls`,
        };
      }
      const unsurfaced = unsurfacedInTeam(scene, stored);
      return unsurfaced.length > 0 ? { broke: "unsurfaced", message: unsurfaced.join("\n") } : null;
    },
  };
  return workload;
}
