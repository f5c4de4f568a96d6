import type { Runtime } from "../loop.js";
import type { Workload } from "../workload.js";
import type { Share } from "./side-by-side.js";

/** Rounds of one store's measurement (the first `warmupRounds` unmeasured). */
export interface StorePlan {
  warmupRounds: number;
  rounds: number;
  /** About how many steps of each workload a runtime runs per round (at least one run). */
  stepsPerRound: number;
  /** Steps of the untimed pass that counts statements, commits and bytes, at least. */
  accountSteps: number;
  /**
   * LangGraph.js writes its whole message list again at every step, so a long loop costs it
   * far more per step: from `longTurns` turns on it takes part in `longRounds` of the rounds
   * (spread over them) after `longWarmupRounds`, and counts over `longAccountSteps` steps.
   */
  langgraphLong: {
    longTurns: number;
    longWarmupRounds: number;
    longRounds: number;
    longAccountSteps: number;
  };
}

/** The rounds `runtime` takes part in on `workload`. */
export function shareOf(plan: StorePlan, runtime: Runtime, workload: Workload): Share {
  const long = plan.langgraphLong;
  const isLong = runtime === "langgraph" && workload.turns >= long.longTurns;
  return {
    warmupRounds: isLong ? Math.min(long.longWarmupRounds, plan.warmupRounds) : plan.warmupRounds,
    rounds: isLong ? Math.min(long.longRounds, plan.rounds) : plan.rounds,
    stepsPerRound: plan.stepsPerRound,
  };
}

/** Runs of `workload` the counting pass makes for `runtime`: enough for its least steps. */
export function accountRuns(plan: StorePlan, runtime: Runtime, workload: Workload): number {
  const long = runtime === "langgraph" && workload.turns >= plan.langgraphLong.longTurns;
  const steps = long ? plan.langgraphLong.longAccountSteps : plan.accountSteps;
  return Math.max(1, Math.ceil(steps / (workload.turns * 2 + 1)));
}
