import { join } from "node:path";
import { accountSqliteFile, type SqliteAccount } from "../accounting/sqlite-account.js";
import { SqliteRawCommit } from "../floor/sqlite-raw-commit.js";
import type { Loop, Runtime, StoreSpec } from "../loop.js";
import { openLoop } from "../open-loop.js";
import { stepsPerRun, workloadTag } from "../workload.js";
import type { SqliteWorkload } from "./measure-sqlite.js";
import { accountRuns, shareOf, type StorePlan } from "./plan.js";
import { SideBySide, type SideBySideTimes } from "./side-by-side.js";

/** One workload on SQLite: both runtimes' timings beside the raw commit floor, and the counts. */
export interface SqliteRow extends SqliteWorkload {
  store: "sqlite";
  steps: number;
  /** The floor: one raw synchronous=FULL commit per step, made right after each run. */
  times: SideBySideTimes;
  accounts: { tenxgraph: SqliteAccount; langgraph: SqliteAccount | null };
}

/**
 * One workload on SQLite files in `dir`: each runtime's counts (statements, commits, bytes)
 * from an untimed pass on a file of its own, then its timed loop on another, and the raw FULL
 * commits of the floor on a third, as large as what a tenxgraph step adds to its file.
 */
export class SqliteWorkloadBench {
  readonly #workload: SqliteWorkload;
  readonly #accounts: Map<Runtime, SqliteAccount>;
  readonly #loops: Loop[];
  readonly #floor: SqliteRawCommit;
  readonly sideBySide: SideBySide;

  private constructor(
    workload: SqliteWorkload,
    accounts: Map<Runtime, SqliteAccount>,
    loops: Loop[],
    floor: SqliteRawCommit,
    plan: StorePlan,
  ) {
    this.#workload = workload;
    this.#accounts = accounts;
    this.#loops = loops;
    this.#floor = floor;
    this.sideBySide = new SideBySide(
      workload,
      loops.map((loop) => ({ loop, share: shareOf(plan, loop.runtime, workload) })),
      { msPerStep: async (steps) => floor.run(steps) },
      plan,
    );
  }

  static async open(
    workload: SqliteWorkload,
    runtimes: Runtime[],
    { dir, plan }: { dir: string; plan: StorePlan },
  ): Promise<SqliteWorkloadBench> {
    const name = `${workload.synchronous}-${workloadTag(workload)}`;
    const spec = (runtime: Runtime, use: string): Extract<StoreSpec, { kind: "sqlite" }> => ({
      kind: "sqlite",
      path: join(dir, `${use}-${runtime}-${name}.db`),
      synchronous: workload.synchronous,
    });
    const accounts = new Map<Runtime, SqliteAccount>();
    for (const runtime of runtimes) {
      const store = spec(runtime, "account");
      const loop = await openLoop(runtime, workload, store);
      try {
        const runs = accountRuns(plan, runtime, workload);
        accounts.set(runtime, await accountSqliteFile(loop, store.path, runs));
      } finally {
        await loop.close();
      }
    }
    const loops = await Promise.all(
      runtimes.map((runtime) => openLoop(runtime, workload, spec(runtime, "timed"))),
    );
    // The raw row is as large as what a tenxgraph step adds to the file.
    const rowBytes = accounts.get("tenxgraph")!.bytesPerStep;
    const floor = new SqliteRawCommit(join(dir, `raw-${name}.db`), "FULL", rowBytes);
    return new SqliteWorkloadBench(workload, accounts, loops, floor, plan);
  }

  /** The figures of the measured rounds. */
  result(): SqliteRow {
    return {
      store: "sqlite",
      ...this.#workload,
      steps: stepsPerRun(this.#workload),
      times: this.sideBySide.result(),
      accounts: {
        tenxgraph: this.#accounts.get("tenxgraph")!,
        langgraph: this.#accounts.get("langgraph") ?? null,
      },
    };
  }

  async close(): Promise<void> {
    this.#floor.close();
    await Promise.all(this.#loops.map((loop) => loop.close()));
  }
}
