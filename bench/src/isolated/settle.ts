import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Waits until process `pid` stops using the CPU: its threads (V8's concurrent GC helpers as
 * well as the main one) ran less than `quietMs` over the last `windowMs`, or `maxMs` passed.
 *
 * Why: a runtime's run returns while its GC helpers still mark and sweep the heap it made.
 * Measured on the 50-turn loop, LangGraph.js's process kept burning up to 50 ms of CPU after
 * some runs, and on a 2-core machine that landed on the next timed run, whichever runtime's it
 * was (tenxgraph at 50 turns, 1 tool per turn, measured 0.12 ms/step beside it and 0.07 alone).
 * Waiting after every run of both runtimes gives each timed run the machine it would have alone.
 * Off Linux (no /proc) it returns at once.
 */
export async function settle(
  pid: number,
  { windowMs = 10, quietMs = 0.5, maxMs = 1000 } = {},
): Promise<void> {
  const started = performance.now();
  let last = cpuMsOf(pid);
  if (last === null) return;
  while (performance.now() - started < maxMs) {
    await sleep(windowMs);
    const now = cpuMsOf(pid);
    if (now === null || now - last < quietMs) return;
    last = now;
  }
}

/** CPU ms used so far by every thread of `pid` (schedstat's run time), or null without /proc. */
function cpuMsOf(pid: number): number | null {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  let ns = 0;
  for (const task of tasks) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read: its time no longer counts.
    }
  }
  return ns / 1e6;
}
