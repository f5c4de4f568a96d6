import { readFileSync } from "node:fs";
import type { Runtime, StoreSpec } from "../loop.js";
import { openLoop } from "../open-loop.js";
import type { BenchServers } from "../servers/bench-servers.js";
import { WarningLog } from "../tenxgraph/warning-log.js";
import type { Workload } from "../workload.js";

/** What the parent asks of this child: one runtime, one store, `runs` runs of one workload. */
export interface PeakRssTask {
  runtime: Runtime;
  store: "memory" | "sqlite" | "postgres";
  workload: Workload;
  runs: number;
  /** The SQLite file, or the PostgreSQL server and schema, to use. */
  path?: string;
  postgresDsn?: string;
  schema?: string;
}

/**
 * Run by `peak-rss.ts` in a fresh Node process (`node --import tsx`): opens the loop, makes the
 * runs and prints this process's peak resident set size, so no other runtime's heap or cache
 * shares the figure.
 */
const task = JSON.parse(process.argv[2]!) as PeakRssTask;
const loop = await openLoop(task.runtime, task.workload, specOf(task));
let steps = 0;
try {
  for (let i = 0; i < task.runs; i++) steps += (await loop.run(`rss-${i}`)).steps;
} finally {
  await loop.close();
}
process.stdout.write(JSON.stringify({ ...peakRss(), steps }) + "\n");

/**
 * This process's peak resident set size. On Linux, `process.resourceUsage().maxRSS` is carried
 * over exec from the forked image of the parent (the kernel keeps the larger of the two), so a
 * child of a large bench process reports the parent's peak; VmHWM in /proc/self/status belongs
 * to the new address space alone. Elsewhere maxRSS is the best there is.
 */
function peakRss(): { maxRssBytes: number; source: "VmHWM" | "maxRSS" } {
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kib) return { maxRssBytes: Number(kib) * 1024, source: "VmHWM" };
  } catch {
    // Not Linux: fall through.
  }
  // maxRSS is in KiB.
  return { maxRssBytes: process.resourceUsage().maxRSS * 1024, source: "maxRSS" };
}

function specOf(task: PeakRssTask): StoreSpec {
  switch (task.store) {
    case "memory":
      return { kind: "memory" };
    case "sqlite":
      return { kind: "sqlite", path: task.path!, synchronous: "FULL" };
    case "postgres":
      return {
        kind: "postgres",
        servers: { postgresDsn: task.postgresDsn! } as BenchServers,
        schema: task.schema!,
        withRedis: false,
        warnings: new WarningLog(),
      };
  }
}
