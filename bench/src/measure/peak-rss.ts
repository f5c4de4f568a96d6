import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Runtime } from "../loop.js";
import type { Workload } from "../workload.js";
import type { PeakRssTask } from "./peak-rss-child.js";

/** Peak RSS of each runtime on one store, each in a fresh process, before and after the runs. */
export interface PeakRssRow extends Workload {
  store: PeakRssTask["store"];
  runs: number;
  /** Peak RSS in MiB of a process that ran `runs` runs, and of one that only opened the store. */
  runtimes: { runtime: Runtime; peakMiB: number; openedOnlyMiB: number }[];
  /** tenxgraph's peak over LangGraph's. */
  ratio: number | null;
  /** Where the peak was read: /proc/self/status VmHWM (Linux) or process.resourceUsage(). */
  source: string;
}

const CHILD = fileURLToPath(new URL("./peak-rss-child.js", import.meta.url)).replace(
  /\.js$/,
  ".ts",
);

/**
 * For each runtime: a child process that opens the store and makes `runs` runs of `workload`,
 * and one that opens the store and makes none (what loading the runtime and its store costs).
 * `where(runtime, use)` names the store's file or schema for each child.
 */
export async function measurePeakRss(
  store: PeakRssTask["store"],
  workload: Workload,
  runs: number,
  runtimes: Runtime[],
  where: (runtime: Runtime, use: string) => Partial<PeakRssTask>,
): Promise<PeakRssRow> {
  const figures: PeakRssRow["runtimes"] = [];
  const sources = new Set<string>();
  for (const runtime of runtimes) {
    const task = { runtime, store, workload };
    const opened = await runChild({ ...task, runs: 0, ...where(runtime, "opened") });
    const peak = await runChild({ ...task, runs, ...where(runtime, "runs") });
    sources.add(opened.source).add(peak.source);
    figures.push({
      runtime,
      peakMiB: mib(peak.maxRssBytes),
      openedOnlyMiB: mib(opened.maxRssBytes),
    });
  }
  const of = (runtime: Runtime) => figures.find((f) => f.runtime === runtime)?.peakMiB;
  const tenxgraph = of("tenxgraph");
  const langgraph = of("langgraph");
  return {
    store,
    ...workload,
    runs,
    runtimes: figures,
    ratio: tenxgraph && langgraph ? tenxgraph / langgraph : null,
    source: [...sources].join(", "),
  };
}

async function runChild(task: PeakRssTask): Promise<{ maxRssBytes: number; source: string }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", CHILD, JSON.stringify(task)],
    { maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as { maxRssBytes: number; source: string };
}

function mib(bytes: number): number {
  return bytes / 2 ** 20;
}
