import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type { Workload } from "../tenxgraph/react-loop.js";
import { SqliteWorkloadBench, type SqliteRow } from "./sqlite-workload-bench.js";

/** A workload on SQLite: the loop's shape and the `synchronous` setting of the file. */
export interface SqliteWorkload extends Workload {
  synchronous: "FULL" | "NORMAL";
}

/** Rounds to run (the first `warmupRounds` unmeasured) and about how many steps per round. */
export interface SqlitePlan {
  warmupRounds: number;
  rounds: number;
  stepsPerRound: number;
  /** Steps of the untimed pass that counts statements, commits and bytes, at least. */
  accountSteps: number;
}

/**
 * Measures every workload on SqliteCheckpointer files in a fresh folder of the OS temp folder.
 * The workloads take turns, a round at a time, so a busy spell of the machine or its disk falls
 * on all rows alike instead of on whichever ran then; short loops run several times a round.
 */
export async function measureSqlite(
  workloads: SqliteWorkload[],
  plan: SqlitePlan,
): Promise<SqliteRow[]> {
  const dir = mkdtempSync(join(os.tmpdir(), "tenxgraph-bench-"));
  const benches: SqliteWorkloadBench[] = [];
  try {
    for (const { synchronous, ...workload } of workloads) {
      benches.push(
        await SqliteWorkloadBench.open(workload, synchronous, {
          dir,
          accountSteps: plan.accountSteps,
        }),
      );
    }
    for (let round = 0; round < plan.warmupRounds + plan.rounds; round++) {
      for (const bench of benches) {
        const runs = Math.max(1, Math.round(plan.stepsPerRound / bench.stepsPerRun));
        await bench.round(runs, round >= plan.warmupRounds);
      }
    }
    return benches.map((bench) => bench.result());
  } finally {
    for (const bench of benches) await bench.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
