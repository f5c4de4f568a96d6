import type { MemoryRow } from "../measure/measure-memory.js";
import type { PgRow } from "../measure/pg-workload-bench.js";
import type { SqliteRow } from "../measure/sqlite-workload-bench.js";
import type { BenchResults } from "./bench-results.js";

/** Any store's row of timings, with the name the report gives its store. */
export type TimedRow = (MemoryRow | SqliteRow | PgRow) & { storeName: string };

/** Every timed row of every store, memory first, then SQLite, then PostgreSQL. */
export function timedRows(results: BenchResults): TimedRow[] {
  return [
    ...results.memory.map((r) => ({ ...r, storeName: "memory" })),
    ...results.sqlite.map((r) => ({ ...r, storeName: `SQLite, tenxgraph ${r.synchronous}` })),
    ...results.postgres.rows.map((r) => ({
      ...r,
      storeName: r.store === "postgres" ? "PostgreSQL" : "PostgreSQL + Redis",
    })),
  ];
}
