import { runBare } from "../floor/bare-loop.js";
import type { Loop, Runtime } from "../loop.js";
import { openIsolatedLoop } from "../isolated/isolated-loop.js";
import { stepsPerRun, type Workload } from "../workload.js";
import { shareOf, type StorePlan } from "./plan.js";
import { SideBySide, takeTurns, type Floor, type SideBySideTimes } from "./side-by-side.js";

/** One workload on the in-memory stores, beside the same loop with no runtime. */
export interface MemoryRow extends Workload {
  store: "memory";
  steps: number;
  /** The floor is the same loop with no runtime, run after each runtime's run. */
  times: SideBySideTimes;
}

/**
 * Every workload on tenxgraph's InMemoryCheckpointer and LangGraph's MemorySaver, a round at a
 * time; each run is followed by a run of the bare loop (the floor). Each runtime's loop of each
 * workload runs in a process of its own (see `openIsolatedLoop`).
 */
export async function measureMemory(
  workloads: Workload[],
  runtimes: Runtime[],
  plan: StorePlan,
): Promise<MemoryRow[]> {
  const loops: Loop[] = [];
  try {
    const benches: SideBySide[] = [];
    for (const workload of workloads) {
      const opened = await Promise.all(
        runtimes.map((runtime) =>
          openIsolatedLoop({ runtime, workload, spec: { kind: "memory" } }),
        ),
      );
      loops.push(...opened);
      benches.push(
        new SideBySide(
          workload,
          opened.map((loop) => ({ loop, share: shareOf(plan, loop.runtime, workload) })),
          bareFloor(workload),
          plan,
        ),
      );
    }
    await takeTurns(benches, plan);
    return workloads.map((workload, i) => ({
      store: "memory",
      ...workload,
      steps: stepsPerRun(workload),
      times: benches[i]!.result(),
    }));
  } finally {
    await Promise.all(loops.map((loop) => loop.close()));
  }
}

/** The bare loop of `workload` as a floor: one run of it per measurement. */
export function bareFloor(workload: Workload): Floor {
  return {
    async msPerStep() {
      const run = await runBare(workload);
      return run.ms / run.steps;
    },
  };
}
