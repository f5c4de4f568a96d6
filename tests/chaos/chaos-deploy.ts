import type { GraphVersion } from "../crash/support/graph-versions.js";
import type { Rng } from "../crash/support/prng.js";
import type { ChaosGraph } from "./chaos-workload.js";

/**
 * A rolling deploy in the middle of a chaos run, by kill counts: before `from` every process
 * runs the support agent's version 1; from `from` to `to` each new process runs version 1 or 2
 * at random (both versions live, two or three of them on a thread at once); from `to` on,
 * version 2 only. SIGKILLs and SIGSTOPs go on throughout.
 */
export interface DeployPlan {
  from: number;
  to: number;
}

/** Where the deploy starts and ends, as fractions of the run's kills. */
const DEPLOY_FROM = 0.3;
const DEPLOY_TO = 0.5;

/** The deploy of a run of `kills` on `graph`: the support agent's (the team has one version). */
export function defaultDeploy(graph: ChaosGraph, kills: number): DeployPlan | null {
  if (graph !== "support") return null;
  return { from: Math.floor(kills * DEPLOY_FROM), to: Math.floor(kills * DEPLOY_TO) };
}

/**
 * The version a process started now runs, `kills` into the run; undefined without a deploy
 * (the graph is compiled without a version, as before deploys were tested).
 */
export function versionNow(
  deploy: DeployPlan | null,
  kills: number,
  rng: Rng,
): GraphVersion | undefined {
  if (deploy === null) return undefined;
  if (kills < deploy.from) return 1;
  if (kills >= deploy.to) return 2;
  return rng() < 0.5 ? 1 : 2;
}
