/** How much of each "many workers" measurement to take. */
export interface WorkersPlan {
  takeoverTrials: number;
  /** How long the takeover graph's node works: the SIGKILL lands inside it. */
  takeoverNodeMs: number;
  latencyWarmup: number;
  latencySamples: number;
  /** Runs queued up front per throughput round. */
  throughputRuns: number;
  /**
   * Warm-up runs per worker process before each throughput round, untimed: a worker is a
   * long-lived process, and a cold one spends its first runs compiling (see bench/README.md).
   */
  throughputWarmupRuns: number;
  /** Rounds per worker count, the counts taking turns; the median is reported. */
  throughputRounds: number;
  throughputWorkers: number[];
  /** Units of CPU work (about 1 ms each) per process of the machine's floor, after each round. */
  cpuFloorUnits: number;
}

/** The "many workers" sizes: the full run, or `--quick` (a smoke run for CI). */
export function workersPlan(quick: boolean): WorkersPlan {
  return {
    takeoverTrials: quick ? 5 : 20,
    takeoverNodeMs: 2000,
    latencyWarmup: quick ? 2 : 5,
    latencySamples: quick ? 10 : 50,
    throughputRuns: quick ? 40 : 200,
    throughputWarmupRuns: quick ? 40 : 150,
    throughputRounds: quick ? 1 : 3,
    throughputWorkers: [1, 4],
    cpuFloorUnits: quick ? 100 : 400,
  };
}
