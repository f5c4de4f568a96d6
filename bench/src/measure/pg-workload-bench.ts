import { accountPgSchema, type PgAccount } from "../accounting/pg-account.js";
import type { PgObserver } from "../accounting/pg-observer.js";
import { PgRawCommit } from "../floor/pg-raw-commit.js";
import type { Runtime, StoreSpec } from "../loop.js";
import type { BenchServers } from "../servers/bench-servers.js";
import { pgLabel, type PgWorkload } from "../tenxgraph/pg-stores.js";
import type { WarningLog } from "../tenxgraph/warning-log.js";
import { stepsPerRun } from "../workload.js";
import type { StorePlan } from "./plan.js";
import type { SideBySideTimes } from "./side-by-side.js";
import { StoreWorkloadBench } from "./store-workload-bench.js";

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
 * One workload on PostgreSQL: each runtime's counts on a schema of its own, its timed loop on
 * another, and the floor's raw commits (same server, a scratch table of their own).
 */
export async function openPgWorkloadBench(
  workload: PgWorkload,
  runtimes: Runtime[],
  context: PgBenchContext,
  plan: StorePlan,
): Promise<StoreWorkloadBench<PgAccount>> {
  return StoreWorkloadBench.open(workload, runtimes, plan, {
    spec: (runtime, use) => pgSpec(context, workload, runtime, use),
    account: (loop, spec, runs) => accountPgSchema(loop, context.observer, spec.schema, runs),
    floor: async (rowBytes) => {
      const raw = await PgRawCommit.open(context.servers.postgresDsn, {
        schema: `${context.schemaPrefix}_${pgLabel(workload)}_raw`,
        rowBytes,
      });
      return { msPerStep: (steps) => raw.sequential(steps), close: () => raw.close() };
    },
  });
}

/** The figures of `bench`'s measured rounds. */
export function pgRow(workload: PgWorkload, bench: StoreWorkloadBench<PgAccount>): PgRow {
  return {
    ...workload,
    steps: stepsPerRun(workload),
    times: bench.sideBySide.result(),
    accounts: bench.accounts(),
  };
}
