import { join } from "node:path";
import { accountSqliteFile, type SqliteAccount } from "../accounting/sqlite-account.js";
import { SqliteRawCommit } from "../floor/sqlite-raw-commit.js";
import type { Runtime, StoreSpec } from "../loop.js";
import { stepsPerRun, workloadTag } from "../workload.js";
import type { SqliteWorkload } from "./measure-sqlite.js";
import type { StorePlan } from "./plan.js";
import type { SideBySideTimes } from "./side-by-side.js";
import { StoreWorkloadBench } from "./store-workload-bench.js";

/** One workload on SQLite: both runtimes' timings beside the raw commit floor, and the counts. */
export interface SqliteRow extends SqliteWorkload {
  store: "sqlite";
  steps: number;
  /** The floor: one raw synchronous=FULL commit per step, made right after each run. */
  times: SideBySideTimes;
  accounts: { tenxgraph: SqliteAccount; langgraph: SqliteAccount | null };
}

/**
 * One workload on SQLite files in `dir`: each runtime's counts (statements, commits, bytes) on
 * a file of its own, its timed loop on another, and the floor's raw FULL commits on a third.
 */
export async function openSqliteWorkloadBench(
  workload: SqliteWorkload,
  runtimes: Runtime[],
  { dir, plan }: { dir: string; plan: StorePlan },
): Promise<StoreWorkloadBench<SqliteAccount>> {
  const name = `${workload.synchronous}-${workloadTag(workload)}`;
  return StoreWorkloadBench.open(workload, runtimes, plan, {
    spec: (runtime, use): Extract<StoreSpec, { kind: "sqlite" }> => ({
      kind: "sqlite",
      path: join(dir, `${use}-${runtime}-${name}.db`),
      synchronous: workload.synchronous,
    }),
    account: (loop, spec, runs) => accountSqliteFile(loop, spec.path, runs),
    floor: async (rowBytes) => {
      const raw = new SqliteRawCommit(join(dir, `raw-${name}.db`), "FULL", rowBytes);
      return { msPerStep: async (steps) => raw.run(steps), close: () => raw.close() };
    },
  });
}

/** The figures of `bench`'s measured rounds. */
export function sqliteRow(
  workload: SqliteWorkload,
  bench: StoreWorkloadBench<SqliteAccount>,
): SqliteRow {
  return {
    store: "sqlite",
    ...workload,
    steps: stepsPerRun(workload),
    times: bench.sideBySide.result(),
    accounts: bench.accounts(),
  };
}
