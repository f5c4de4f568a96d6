import { accountPgSchema, type PgAccount } from "../accounting/pg-account.js";
import type { PgObserver } from "../accounting/pg-observer.js";
import { PgRawCommit } from "../floor/pg-raw-commit.js";
import type { Loop, Runtime, StoreSpec } from "../loop.js";
import { openLoop } from "../open-loop.js";
import type { BenchServers } from "../servers/bench-servers.js";
import { pgLabel, type PgWorkload } from "../tenxgraph/pg-stores.js";
import type { WarningLog } from "../tenxgraph/warning-log.js";
import { stepsPerRun } from "../workload.js";
import { accountRuns, shareOf, type StorePlan } from "./plan.js";
import { SideBySide, type SideBySideTimes } from "./side-by-side.js";

/** One workload on PostgreSQL: the runtimes' timings beside the raw commit floor, and counts. */
export interface PgRow extends PgWorkload {
  steps: number;
  /** The floor: one raw autocommit INSERT per step on the same server, right after each run. */
  times: SideBySideTimes;
  accounts: { tenxgraph: PgAccount; langgraph: PgAccount | null };
}

/** Where a bench's schemas, servers and counters are. */
export interface PgBenchContext {
  servers: BenchServers;
  observer: PgObserver;
  /** Prefix of the schemas made for this bench run: `<prefix>_<label>_timed` and so on. */
  schemaPrefix: string;
  warnings: WarningLog;
}

/** The store `runtime` uses for `workload`, in the schema `<prefix>_<runtime>_<label>_<use>`. */
export function pgSpec(
  context: PgBenchContext,
  workload: PgWorkload,
  runtime: Runtime,
  use: string,
): Extract<StoreSpec, { kind: "postgres" }> {
  return {
    kind: "postgres",
    servers: context.servers,
    schema: `${context.schemaPrefix}_${runtime}_${pgLabel(workload)}_${use}`,
    withRedis: workload.store === "postgres+redis",
    warnings: context.warnings,
  };
}

/**
 * One workload on PostgreSQL: each runtime's counts from an untimed pass on a schema of its
 * own, then its timed loop on another, and the floor's raw commits (same server, a scratch
 * table of their own) as large as what a tenxgraph step adds to its tables.
 */
export class PgWorkloadBench {
  readonly #workload: PgWorkload;
  readonly #accounts: Map<Runtime, PgAccount>;
  readonly #loops: Loop[];
  readonly #floor: PgRawCommit;
  readonly sideBySide: SideBySide;

  private constructor(
    workload: PgWorkload,
    accounts: Map<Runtime, PgAccount>,
    loops: Loop[],
    floor: PgRawCommit,
    plan: StorePlan,
  ) {
    this.#workload = workload;
    this.#accounts = accounts;
    this.#loops = loops;
    this.#floor = floor;
    this.sideBySide = new SideBySide(
      workload,
      loops.map((loop) => ({ loop, share: shareOf(plan, loop.runtime, workload) })),
      { msPerStep: (steps) => floor.sequential(steps) },
      plan,
    );
  }

  static async open(
    workload: PgWorkload,
    runtimes: Runtime[],
    context: PgBenchContext,
    plan: StorePlan,
  ): Promise<PgWorkloadBench> {
    const accounts = new Map<Runtime, PgAccount>();
    for (const runtime of runtimes) {
      const spec = pgSpec(context, workload, runtime, "account");
      const loop = await openLoop(runtime, workload, spec);
      try {
        const runs = accountRuns(plan, runtime, workload);
        accounts.set(runtime, await accountPgSchema(loop, context.observer, spec.schema, runs));
      } finally {
        await loop.close();
      }
    }
    // The raw row is as large as what a tenxgraph step adds to the tables.
    const floor = await PgRawCommit.open(context.servers.postgresDsn, {
      schema: `${context.schemaPrefix}_${pgLabel(workload)}_raw`,
      rowBytes: accounts.get("tenxgraph")!.bytesPerStep,
    });
    const loops = await Promise.all(
      runtimes.map((runtime) =>
        openLoop(runtime, workload, pgSpec(context, workload, runtime, "timed")),
      ),
    );
    return new PgWorkloadBench(workload, accounts, loops, floor, plan);
  }

  /** The figures of the measured rounds. */
  result(): PgRow {
    return {
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
    await Promise.all([this.#floor.close(), ...this.#loops.map((loop) => loop.close())]);
  }
}
