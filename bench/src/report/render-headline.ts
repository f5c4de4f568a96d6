import type { BenchResults } from "./bench-results.js";
import { fixed, table, times, toolsLabel } from "./format.js";
import { timedRows } from "./side-by-side-row.js";

/** One row per store and workload: both runtimes' ms per step and the ratios. */
export function renderHeadline(results: BenchResults): string[] {
  const rows = timedRows(results).map((r) => {
    const { tenxgraph, langgraph, ratio, floorMsPerStep } = r.times;
    return [
      r.storeName,
      `${r.turns}`,
      toolsLabel(r.toolsPerTurn),
      fixed(tenxgraph.msPerStep, 3),
      langgraph ? fixed(langgraph.msPerStep, 3) : "no such saver",
      `**${times(ratio)}**`,
      fixed(floorMsPerStep, 4),
      times(tenxgraph.floorRatio, 1),
      times(langgraph?.floorRatio, 1),
      `${tenxgraph.runs} / ${langgraph?.runs ?? "–"}`,
    ];
  });
  return table(
    [
      "store",
      "turns",
      "tools",
      "tenxgraph ms/step",
      "LangGraph.js ms/step",
      "tenxgraph / LangGraph.js",
      "floor ms/step",
      "tenxgraph / floor",
      "LangGraph.js / floor",
      "runs (tenxgraph / LangGraph.js)",
    ],
    rows,
  );
}
