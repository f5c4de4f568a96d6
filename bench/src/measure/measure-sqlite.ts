import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type { Runtime } from "../loop.js";
import type { Workload } from "../workload.js";
import type { StorePlan } from "./plan.js";
import { openSqliteWorkloadBench, sqliteRow, type SqliteRow } from "./sqlite-workload-bench.js";
import { measureWorkloads } from "./store-workload-bench.js";

/** A workload on SQLite: the loop's shape and tenxgraph's `synchronous` setting. */
export interface SqliteWorkload extends Workload {
  synchronous: "FULL" | "NORMAL";
}

/**
 * Measures every workload on SQLite files in a fresh folder of the OS temp folder, tenxgraph's
 * SqliteCheckpointer beside LangGraph's SqliteSaver. The workloads take turns, a round at a
 * time, so a busy spell of the machine or its disk falls on all rows alike.
 */
export async function measureSqlite(
  workloads: SqliteWorkload[],
  runtimes: Runtime[],
  plan: StorePlan,
): Promise<SqliteRow[]> {
  const dir = mkdtempSync(join(os.tmpdir(), "tenxgraph-bench-"));
  try {
    return await measureWorkloads(
      workloads,
      plan,
      (workload) => openSqliteWorkloadBench(workload, runtimes, { dir, plan }),
      sqliteRow,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
