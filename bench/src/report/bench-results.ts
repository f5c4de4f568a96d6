import type { HttpPlan, HttpResults } from "../http/measure-http.js";
import type { ConcurrencyRow } from "../measure/concurrency.js";
import type { MemoryRow } from "../measure/measure-memory.js";
import type { PgPlan, PostgresResults } from "../measure/measure-postgres.js";
import type { PeakRssRow } from "../measure/peak-rss.js";
import type { TracingRow } from "../measure/measure-tracing.js";
import type { StorePlan } from "../measure/plan.js";
import type { SqliteRow } from "../measure/sqlite-workload-bench.js";
import type { WorkersResults } from "../workers/measure-workers.js";

/** Everything one bench run found, as written to results.json. */
export interface BenchResults {
  machine: string;
  /** Node, the packages the figures depend on, and the servers. */
  versions: Record<string, string>;
  /** The 1-minute load average when the bench started and ended. */
  load: { atStart: number; atEnd: number };
  /** Wall time of each part of the measurements (the build before them not included). */
  seconds: Record<string, number>;
  quick: boolean;
  plans: {
    memory: StorePlan;
    sqlite: StorePlan;
    postgres: PgPlan;
    rssRuns: number;
    /** Absent in results measured before the HTTP bench existed. */
    http?: HttpPlan;
  };
  memory: MemoryRow[];
  /** tenxgraph with no OpenTelemetry SDK and with one (absent in results from before it was measured). */
  tracing?: TracingRow[];
  sqlite: SqliteRow[];
  postgres: PostgresResults;
  /** 1 thread against 8, every store. */
  concurrency: ConcurrencyRow[];
  peakRss: PeakRssRow[];
  /** The HTTP API beside in-process calls (absent in results from before it was measured). */
  http?: HttpResults;
  /** Background runs across worker processes (absent in results from before it was measured). */
  workers?: WorkersResults;
}
