import type { MemoryRow } from "../measure/measure-memory.js";
import type { BenchResults } from "./bench-results.js";
import { toolsLabel } from "./format.js";
import { howMeasured } from "./how-measured.js";
import { renderGoals } from "./render-goals.js";
import { renderHeadline } from "./render-headline.js";
import { renderHttp } from "./render-http.js";
import { renderPostgres } from "./render-postgres.js";
import { renderSqlite } from "./render-sqlite.js";
import { renderPeakRss, renderThreads } from "./render-threads.js";
import { timingTable } from "./render-timings.js";
import { renderTracing } from "./render-tracing.js";
import { renderWorkers } from "./render-workers.js";

/** The results as the Markdown of results.md: headline and goals first, details after. */
export function renderReport(results: BenchResults): string {
  const { machine, load, seconds, quick } = results;
  return [
    `# tenxgraph beside LangGraph.js${quick ? " (quick)" : ""}`,
    "",
    `Machine: ${machine}; 1-minute load average ${load.atStart.toFixed(1)} at the start, ${load.atEnd.toFixed(1)} at the end; ${durations(seconds)}.`,
    `Versions: ${Object.entries(results.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(", ")}.`,
    "",
    "Lower is better for every ratio: *tenxgraph / LangGraph.js* below 1 means tenxgraph takes less time per step.",
    "",
    ...renderHeadline(results),
    "",
    "## Performance goals",
    "",
    ...renderGoals(results),
    "",
    ...memorySection(results.memory),
    "",
    ...(results.tracing ? [...renderTracing(results.tracing), ""] : []),
    ...renderSqlite(results.sqlite),
    "",
    ...renderPostgres(results.postgres),
    "",
    ...renderThreads(results.concurrency),
    "",
    ...renderPeakRss(results.peakRss),
    "",
    ...(results.http && results.plans.http
      ? [...renderHttp(results.http, results.plans.http), ""]
      : []),
    ...(results.workers ? [...renderWorkers(results.workers), ""] : []),
    ...howMeasured(results),
    "",
  ].join("\n");
}

/** `measured in 380 s (memory 9 s, sqlite 95 s, postgres 276 s)`. */
function durations(seconds: Record<string, number>): string {
  const total = Object.values(seconds).reduce((sum, s) => sum + s, 0);
  const parts = Object.entries(seconds).map(([part, s]) => `${part} ${s} s`);
  return `measured in ${total} s (${parts.join(", ")})`;
}

/** The in-memory section: also what `npm run bench -- --only memory` prints. */
export function memorySection(rows: MemoryRow[]): string[] {
  return [
    "## In-memory: `InMemoryCheckpointer` beside `MemorySaver`",
    "",
    ...timingTable(
      ["turns", "tools"],
      "bare loop",
      rows.map((r) => ({
        labels: [`${r.turns}`, toolsLabel(r.toolsPerTurn)],
        steps: r.steps,
        times: r.times,
      })),
    ),
    "",
    "The floor is the same loop with no runtime (no store, ledger, deadline, event or copy).",
  ];
}
