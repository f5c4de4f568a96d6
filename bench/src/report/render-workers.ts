import type { WorkersResults } from "../workers/measure-workers.js";
import { fixed, table, times, whole, yesNo } from "./format.js";

/** The "many workers" goals. */
const GOALS = {
  /** SIGKILL to the run continuing on another worker, p99, ms. */
  maxTakeoverMsP99: 5000,
  /** POST to the first node starting on an idle worker, p50, ms. */
  maxQueueLatencyMsP50: 20,
  /** Runs per second with 4 worker processes over 1. */
  minScaling: 1.8,
};

function pair(v: { p50: number; p99: number }, digits: number): string {
  return `${fixed(v.p50, digits)} / ${fixed(v.p99, digits)}`;
}

/** The "many workers" section: takeover, queue latency, throughput with 1 and 4 workers. */
export function renderWorkers(w: WorkersResults): string[] {
  const { plan, takeover, queueLatency } = w;
  const most = w.throughput.at(-1)!;
  return [
    "## Many workers: background runs across worker processes",
    "",
    `1-minute load average ${w.load.atStart.toFixed(1)} at the start of this part, ${w.load.atEnd.toFixed(1)} at its end; PostgreSQL ${w.postgresql}.`,
    "",
    ...table(
      ["goal", "figures", "met"],
      [
        [
          `Takeover after SIGKILL under ${GOALS.maxTakeoverMsP99} ms at p99`,
          `p50 ${whole(takeover.ms.p50)} ms, p99 ${whole(takeover.ms.p99)} ms over ${takeover.trials} kills` +
            (takeover.allCompletedOnSecondAttempt
              ? ""
              : " (a run did not complete on its second attempt)"),
          yesNo(takeover.ms.p99 < GOALS.maxTakeoverMsP99 && takeover.allCompletedOnSecondAttempt),
        ],
        [
          `Queue latency (POST to the node starting) under ${GOALS.maxQueueLatencyMsP50} ms at p50`,
          `p50 ${fixed(queueLatency.ms.p50, 1)} ms, p99 ${fixed(queueLatency.ms.p99, 1)} ms over ${queueLatency.samples} runs`,
          yesNo(queueLatency.ms.p50 < GOALS.maxQueueLatencyMsP50),
        ],
        [
          `${most.workers} worker processes at least ${GOALS.minScaling}x the runs per second of 1`,
          `${times(w.scaling)} (${w.throughput.map((r) => `${r.workers}: ${fixed(r.runsPerSecond, 1)} runs/s`).join(", ")}); ` +
            `at most ${times(w.scalingBound)} on this machine (see its floor below)`,
          yesNo(w.scaling >= GOALS.minScaling),
        ],
      ],
    ),
    "",
    "Takeover, SIGKILL to the run's next attempt beginning on another worker (ms, database clock):",
    "",
    ...table(
      [
        "kills",
        "kill → attempt p50 / p99",
        "kill → hand-back p50 / p99",
        "hand-back → attempt p50 / p99",
        "max",
      ],
      [
        [
          `${takeover.trials}`,
          pair(takeover.ms, 0),
          pair(takeover.detectMs, 0),
          pair(takeover.pickupMs, 1),
          whole(takeover.maxMs),
        ],
      ],
    ),
    "",
    `Queue latency, one idle worker process: POST to the node starting p50 / p99 ${pair(queueLatency.ms, 1)} ms; the POST's own round trip (to its 202) ${pair(queueLatency.postMs, 1)} ms.`,
    "",
    `Throughput, ${plan.throughputRuns} one-step runs on distinct threads queued up front, worker processes of concurrency 1:`,
    "",
    ...table(
      [
        "worker processes",
        "rounds",
        "runs/s (median)",
        "runs/s each round",
        "start-up ms each round",
        "runs per worker (last round)",
        "CPU ms/run: workers / PostgreSQL",
        "machine busy",
      ],
      w.throughput.map((r) => [
        `${r.workers}`,
        `${r.rounds.length}`,
        fixed(r.runsPerSecond, 1),
        r.rounds.map((x) => fixed(x.runsPerSecond, 1)).join(", "),
        r.rounds.map((x) => whole(x.startupMs)).join(", "),
        r.rounds.at(-1)!.perWorker.join(" / "),
        r.rounds
          .map((x) => `${fixed(x.workerCpuMsPerRun, 1)} / ${fixed(x.postgresCpuMsPerRun, 1)}`)
          .join(", "),
        r.rounds
          .map((x) => (x.machineBusy === null ? "n/a" : `${Math.round(x.machineBusy * 100)}%`))
          .join(", "),
      ]),
    ),
    "",
    ...cpuFloorLines(w),
    "",
    "How: each set (takeover, latency, each throughput round) on a fresh database of one",
    "PostgreSQL server (fsync on) holding both the threads (`PgCheckpointer`) and the runs",
    "(`PgRunStore`, graphile-worker's queue); runs are POSTed to `serve()` on 127.0.0.1 in the",
    "bench's process; every worker is a `RunWorker` in a child process (tsx) with the library's",
    "default timings (heartbeat 1000 ms, stale after 3000 ms, poll 500 ms) and concurrency 1, on a",
    "graph of one node. Takeover: two idle workers; the node works " +
      `${plan.takeoverNodeMs} ms; the worker whose node started is`,
    "SIGKILLed after a random 0 to 1000 ms, the database clock (`clock_timestamp()`) is read right",
    "after, and the takeover is the `created_at` of the run's second `run_attempt` event minus that;",
    "the hand-back is the `run_requeued` event of the sweep. A fresh worker replaces the dead one",
    "between kills. Queue latency: Date.now() just before the POST to Date.now() in the node as it",
    `starts (sent over IPC; one machine, one clock), after ${plan.latencyWarmup} warm-up runs, each run joined and`,
    "100 ms of idle before the next. Throughput: the workers start paused (connected, migrated)",
    `and first run ${plan.throughputWarmupRuns} one-step runs each of their own, untimed, then pause again: a deployment's`,
    "workers are long-lived, and a cold process spends its first runs compiling. The timed runs are",
    "POSTed; the database clock is read and the workers told to go; the round ends at",
    "the last run's final write (its row's `updated_at`), so the workers' start (graphile-worker's",
    "own, a few ms) is inside the time. The counts take turns round by round; the median is given.",
    "CPU: utime + stime of the worker processes and of PostgreSQL's processes (/proc) from go to",
    "the end, over the runs; machine busy is /proc/stat's busy share of both CPUs, anyone's work.",
  ];
}

/**
 * The machine's floor for the scaling goal: the same fixed CPU work in 1 and in N processes.
 * No runtime's N workers can do more than this times the runs of one, with CPU as the limit.
 */
function cpuFloorLines(w: WorkersResults): string[] {
  const [one, most] = [w.cpuFloor[0]!, w.cpuFloor.at(-1)!];
  return [
    `The machine's floor: after each round, ${w.plan.cpuFloorUnits} units of fixed CPU work (about 1 ms each:`,
    "objects made, turned into JSON and back; no I/O, nothing shared) in each of 1 and then",
    `${most.processes} processes at once. ${most.processes} processes finished ${times(w.cpuFloorScaling)} the units per second of 1`,
    `(${w.cpuFloor.map((r) => `${r.processes}: ${whole(r.unitsPerSecond)}/s`).join(", ")}), and each unit took ${times(most.cpuMsPerUnit / one.cpuMsPerUnit)} the CPU`,
    `(${w.cpuFloor.map((r) => `${r.processes}: ${fixed(r.cpuMsPerUnit, 3)} ms`).join(", ")}): the cores slow each other. Medians over the rounds.`,
    `So with ${most.processes} busy processes the machine does ${times(w.cpuFloorScaling)} the CPU work of one, and a run needs at`,
    "least the CPU it took with one worker (worker and PostgreSQL, the cores to itself): the most",
    `${most.processes} workers could reach is ${times(w.scalingBound)} one worker's runs per second, with no cost of their own to contend.`,
  ];
}
