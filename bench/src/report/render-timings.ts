import type { SideBySideTimes } from "../measure/side-by-side.js";
import { fixed, table, times } from "./format.js";

/** A row of a store's timing table: the workload's columns, then both runtimes'. */
export interface TimingRow {
  labels: string[];
  steps: number;
  times: SideBySideTimes;
}

/**
 * Both runtimes' timings of each workload: ms per step and per tool call, the ratio, the floor,
 * and tenxgraph's time inside its store (durable stores only).
 */
export function timingTable(labelHeaders: string[], floorName: string, rows: TimingRow[]) {
  const withStore = rows.some((r) => r.times.tenxgraph.store);
  return table(
    [
      ...labelHeaders,
      "steps/run",
      "runs (tenxgraph / LangGraph.js)",
      "tenxgraph ms/step",
      "ms/tool call",
      "LangGraph.js ms/step",
      "ms/tool call",
      "tenxgraph / LangGraph.js",
      `${floorName} ms`,
      "tenxgraph / floor",
      "LangGraph.js / floor",
      ...(withStore ? ["tenxgraph ms per putCheckpoint", "tenxgraph ledger ms/tool call"] : []),
    ],
    rows.map(({ labels, steps, times: t }) => [
      ...labels,
      `${steps}`,
      `${t.tenxgraph.runs} / ${t.langgraph?.runs ?? "–"}`,
      fixed(t.tenxgraph.msPerStep, 3),
      fixed(t.tenxgraph.msPerToolCall, 3),
      fixed(t.langgraph?.msPerStep, 3),
      fixed(t.langgraph?.msPerToolCall, 3),
      times(t.ratio),
      fixed(t.floorMsPerStep, 4),
      times(t.tenxgraph.floorRatio, 1),
      times(t.langgraph?.floorRatio, 1),
      ...(withStore
        ? [
            fixed(t.tenxgraph.store?.msPerWrite, 3),
            fixed(t.tenxgraph.store?.ledgerMsPerToolCall, 3),
          ]
        : []),
    ]),
  );
}
