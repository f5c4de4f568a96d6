import type { AgentParams, FreezePlan, RunInputPlan } from "../crash/support/agent-params.js";
import type { StoredThread } from "../crash/support/crash-scene.js";
import { between, pick, type Rng } from "../crash/support/prng.js";
import { KILL_KINDS, nextInput, type KillKind } from "../crash/support/random-plan.js";
import type { Workload } from "./chaos-workload.js";

/** One process of a wave, with how (and whether) it is disrupted. */
export type WaveProcess = Partial<AgentParams> & Pick<AgentParams, "via" | "input">;

/** How a process of the chaos run may be disrupted: a way of the crash loop, or a SIGSTOP. */
export type Disruption = (typeof KILL_KINDS)[number] | "freeze-kill" | "freeze-continue";

/** SIGSTOP counts twice: it is the one disruption the crash loop does not have. */
const DISRUPTIONS: readonly Disruption[] = [
  ...KILL_KINDS,
  "freeze-kill",
  "freeze-kill",
  "freeze-continue",
  "freeze-continue",
];
/** How many processes work the thread at once: one, two or three. */
const WAVE_SIZES = [1, 2, 2, 3, 3] as const;
/** A process is disrupted this often (while the scenario has kills left). */
const DISRUPTED = 0.65;
/** A run takes a few tens of milliseconds after its first write: stops land all over it. */
const FREEZE_AFTER_MAX_MS = 40;
/**
 * A frozen process that is let go must not look dead to the others (its claims' heartbeats stop
 * while it is frozen): well under claimStaleAfterMs. Taken for dead while alive is the documented
 * limit of a heartbeat, not what this run looks for.
 */
const THAWED_FREEZE_MAX_MS = 300;
/** A frozen process that is then killed may stay frozen past claimStaleAfterMs. */
const KILLED_FREEZE_MAX_MS = 1_500;

/**
 * The processes of the next wave on the thread, from what is stored: one sends the turn if the
 * thread does not exist yet (the others continue, and find nothing or join it); on a paused
 * thread most answer a pending interrupt (possibly the same one, with different answers) and
 * some continue; otherwise all continue. `aimKill` aims a kill of a kind at the scenario's graph;
 * `killsLeft` caps the disruptions that may kill.
 */
export function planWave(
  rng: Rng,
  plan: Pick<Workload<unknown>, "scene" | "policies" | "approval">,
  stored: StoredThread | null,
  aimKill: (kind: KillKind) => Partial<AgentParams>,
  killsLeft: number,
): WaveProcess[] {
  const size = pick(rng, WAVE_SIZES);
  const text = `please help (${plan.scene.threadId})`;
  let kills = killsLeft;
  return Array.from({ length: size }, (_, i): WaveProcess => {
    const input = inputOf(rng, stored, i, text);
    const via = pick(rng, ["invoke", "stream"] as const);
    const base = { via, input, policies: plan.policies, approval: plan.approval, metrics: false };
    if (rng() >= DISRUPTED) return base;
    const disruption = pick(rng, DISRUPTIONS);
    if (disruption === "freeze-continue") return { ...base, freeze: freeze(rng, "continue") };
    if (kills <= 0) return base;
    kills -= 1;
    if (disruption === "freeze-kill") return { ...base, freeze: freeze(rng, "kill") };
    return { ...base, ...aimKill(disruption) };
  });
}

function inputOf(rng: Rng, stored: StoredThread | null, index: number, text: string): RunInputPlan {
  if (!stored?.checkpoint) return index === 0 ? { kind: "new", text } : { kind: "continue" };
  if (stored.checkpoint.status === "interrupted" && rng() < 0.25) return { kind: "continue" };
  return nextInput(rng, stored, text);
}

function freeze(rng: Rng, then: FreezePlan["then"]): FreezePlan {
  const longest = then === "kill" ? KILLED_FREEZE_MAX_MS : THAWED_FREEZE_MAX_MS;
  return { afterMs: between(rng, 0, FREEZE_AFTER_MAX_MS), forMs: between(rng, 20, longest), then };
}

/** The disruption a process was planned with, for the report. */
export function disruptionOf(params: WaveProcess): Disruption | null {
  if (params.freeze) return params.freeze.then === "kill" ? "freeze-kill" : "freeze-continue";
  if (params.hang) return "hang";
  if (params.outsideKillMs !== undefined) return "anytime";
  return params.kill?.point ?? null;
}
