import { runBare } from "../floor/bare-loop.js";
import { median } from "./median.js";
import { buildApp, runOnce, type Workload } from "../tenxgraph/react-loop.js";

/** One workload on the in-memory store, beside the same loop with no runtime. */
export interface MemoryRow {
  store: "memory";
  turns: number;
  toolsPerTurn: number;
  steps: number;
  msPerStep: number;
  msPerToolCall: number;
  /** The same loop with no runtime, measured in the same process, interleaved. */
  floorMsPerStep: number;
  runs: number;
}

/** Median ms per step on InMemoryCheckpointer over `repeats` runs after `warmup` runs. */
export async function measureMemory(
  workload: Workload,
  plan: { warmup: number; repeats: number },
): Promise<MemoryRow> {
  const app = buildApp(workload);
  const perStep: number[] = [];
  const floorPerStep: number[] = [];
  let steps = 0;
  // Runtime and floor runs alternate, so machine noise falls on both alike.
  for (let i = 0; i < plan.warmup + plan.repeats; i++) {
    const run = await runOnce(app, workload, `bench-${workload.toolsPerTurn}-${i}`);
    const bare = await runBare(workload);
    steps = run.steps;
    if (i < plan.warmup) continue;
    perStep.push(run.ms / run.steps);
    floorPerStep.push(bare.ms / bare.steps);
  }
  const msPerStep = median(perStep);
  return {
    store: "memory",
    ...workload,
    steps,
    msPerStep,
    // A turn is two steps (model, tools); this spreads the tools step over its calls.
    msPerToolCall: (msPerStep * 2) / workload.toolsPerTurn,
    floorMsPerStep: median(floorPerStep),
    runs: plan.repeats,
  };
}
