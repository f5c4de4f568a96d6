import type { ConcurrencyRow, CpuPerStep, ThreadFigures } from "../measure/concurrency.js";
import type { PeakRssRow } from "../measure/peak-rss.js";
import { fixed, table, times, toolsLabel, whole } from "./format.js";

/** Steps per second of each runtime with one thread and with many, every store. */
export function renderThreads(rows: ConcurrencyRow[]): string[] {
  const n = rows[0]?.threads ?? 8;
  return [
    `## One thread against ${n}`,
    "",
    ...table(
      [
        "store",
        "turns",
        "tools",
        "runtime",
        "pool",
        "1 thread steps/s",
        `${n} threads steps/s`,
        `${n} / 1`,
        `tenxgraph / LangGraph.js time per step, 1 → ${n}`,
        `raw commits/s, 1 → ${n} connections`,
        `node CPU ms/step, 1 → ${n}`,
        `PostgreSQL CPU ms/step, 1 → ${n}`,
        `Redis CPU ms/step, 1 → ${n}`,
        `machine busy, 1 → ${n}`,
      ],
      rows.flatMap((r) =>
        r.runtimes.map((f) => [
          r.store,
          `${r.turns}`,
          toolsLabel(r.toolsPerTurn),
          f.runtime === "tenxgraph" ? "tenxgraph" : "LangGraph.js",
          r.poolMax === null ? "–" : `${r.poolMax}`,
          whole(f.oneThreadStepsPerSecond),
          whole(f.manyThreadsStepsPerSecond),
          times(f.speedup),
          f.runtime === "tenxgraph" && r.oneThreadRatio !== null
            ? `${times(r.oneThreadRatio)} → ${times(r.manyThreadsRatio)}`
            : "",
          r.raw && f.runtime === "tenxgraph"
            ? `${whole(r.raw.oneConnection)} → ${whole(r.raw.manyConnections)} (${times(r.raw.speedup)})`
            : "",
          cpuPair(f, (c) => c.nodeMsPerStep),
          cpuPair(f, (c) => c.postgresMsPerStep),
          cpuPair(f, (c) => c.redisMsPerStep),
          busyPair(f),
        ]),
      ),
    ),
  ];
}

/** Each runtime's peak RSS in a fresh process, beside one that only opened its store. */
export function renderPeakRss(rows: PeakRssRow[]): string[] {
  const mib = (v: number | undefined) => (v === undefined ? "n/a" : v.toFixed(0));
  return [
    "## Peak RSS",
    "",
    ...table(
      [
        "store",
        "turns",
        "tools",
        "runs",
        "tenxgraph MiB",
        "store opened only",
        "LangGraph.js MiB",
        "store opened only",
        "tenxgraph / LangGraph.js",
        "read from",
      ],
      rows.map((r) => {
        const of = (runtime: string) => r.runtimes.find((f) => f.runtime === runtime);
        return [
          r.store,
          `${r.turns}`,
          toolsLabel(r.toolsPerTurn),
          `${r.runs}`,
          mib(of("tenxgraph")?.peakMiB),
          mib(of("tenxgraph")?.openedOnlyMiB),
          mib(of("langgraph")?.peakMiB),
          mib(of("langgraph")?.openedOnlyMiB),
          times(r.ratio),
          r.source,
        ];
      }),
    ),
  ];
}

function cpuPair(f: ThreadFigures, pick: (cpu: CpuPerStep) => number | null): string {
  const one = pick(f.oneThreadCpu);
  const many = pick(f.manyThreadsCpu);
  return one === null || many === null ? "n/a" : `${fixed(one, 2)} → ${fixed(many, 2)}`;
}

function busyPair(f: ThreadFigures): string {
  const one = f.oneThreadCpu.machineBusy;
  const many = f.manyThreadsCpu.machineBusy;
  const percent = (v: number) => `${Math.round(v * 100)}%`;
  return one === null || many === null ? "n/a" : `${percent(one)} → ${percent(many)}`;
}
