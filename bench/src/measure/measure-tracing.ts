import type { Loop } from "../loop.js";
import { openLoop } from "../open-loop.js";
import { stepsPerRun, type Workload } from "../workload.js";
import { bareFloor } from "./measure-memory.js";
import { shareOf, type StorePlan } from "./plan.js";
import { SideBySide, takeTurns, type RuntimeTimes } from "./side-by-side.js";

/** tenxgraph on the in-memory store with no OpenTelemetry SDK, and with an SDK tracer. */
export interface TracingRow extends Workload {
  steps: number;
  noSdk: RuntimeTimes;
  sdk: RuntimeTimes;
  /** SDK / no SDK, of their median ms per step. */
  ratio: number;
}

/**
 * The cost of tracing per step, both ways: the same loop untraced (no SDK: the API's no-op
 * tracer, the path `bench:compare` gates) and traced by an SDK tracer whose spans are discarded
 * after the span processor, taking turns round by round so noise falls on both.
 */
export async function measureTracing(
  workloads: Workload[],
  plan: StorePlan,
): Promise<TracingRow[]> {
  const loops: Loop[] = [];
  try {
    const pairs: [SideBySide, SideBySide][] = [];
    for (const workload of workloads) {
      const share = shareOf(plan, "tenxgraph", workload);
      const bench = async (sdk: boolean) => {
        const loop = await openLoop("tenxgraph", workload, { kind: "memory", sdk });
        loops.push(loop);
        return new SideBySide(workload, [{ loop, share }], bareFloor(workload), plan);
      };
      pairs.push([await bench(false), await bench(true)]);
    }
    await takeTurns(pairs.flat(), plan);
    return workloads.map((workload, i) => {
      const noSdk = pairs[i]![0].result().tenxgraph;
      const sdk = pairs[i]![1].result().tenxgraph;
      return {
        ...workload,
        steps: stepsPerRun(workload),
        noSdk,
        sdk,
        ratio: sdk.msPerStep / noSdk.msPerStep,
      };
    });
  } finally {
    await Promise.all(loops.map((loop) => loop.close()));
  }
}
