import {
  clockTicks,
  machineCpuMs,
  postgresCpuMs,
  processTicks,
} from "../accounting/cpu-sampler.js";
import { measureCpuScaling, type CpuScalingRow } from "../floor/cpu-scaling.js";
import { median } from "../measure/median.js";
import { withRunsSet, type RunsSet } from "./runs-set.js";
import type { BenchWorkerProcess } from "./worker-processes.js";
import type { WorkersPlan } from "./workers-plan.js";

/** One throughput round of one count of worker processes. */
export interface ThroughputRound {
  seconds: number;
  runsPerSecond: number;
  /** From "go" to the first attempt beginning (worker start-up inside `seconds`), ms. */
  startupMs: number;
  /** Runs each worker process ran. */
  perWorker: number[];
  /** CPU ms per run from "go" to the end: the worker processes together, and PostgreSQL (null when not started here). */
  workerCpuMsPerRun: number;
  postgresCpuMsPerRun: number | null;
  /** Busy share of the machine's CPUs over the round (other tenants' work included), 0..1. */
  machineBusy: number | null;
}

export interface WorkersThroughputRow {
  workers: number;
  runs: number;
  rounds: ThroughputRound[];
  /** Median over the rounds. */
  runsPerSecond: number;
}

/**
 * Runs per second with each count of worker processes, the counts taking turns round by round;
 * after each round, the machine's floor ({@link measureCpuScaling}) with as many processes.
 */
export async function measureThroughput(
  adminDsn: string,
  plan: WorkersPlan,
  postgresDataDir: string | undefined,
): Promise<{ throughput: WorkersThroughputRow[]; cpuFloor: CpuScalingRow[] }> {
  const rounds = new Map<number, ThroughputRound[]>(plan.throughputWorkers.map((w) => [w, []]));
  const floors: CpuScalingRow[][] = [];
  for (let round = 0; round < plan.throughputRounds; round++) {
    for (const workers of plan.throughputWorkers) {
      const result = await withRunsSet(adminDsn, `tput${workers}`, (set) =>
        throughputRound(set, workers, plan, postgresDataDir),
      );
      console.error(
        `bench workers: ${workers} worker(s), ${plan.throughputRuns} runs in ${result.seconds.toFixed(2)} s: ${result.runsPerSecond.toFixed(1)} runs/s`,
      );
      rounds.get(workers)!.push(result);
    }
    floors.push(await measureCpuScaling(plan.throughputWorkers, plan.cpuFloorUnits));
  }
  const throughput = plan.throughputWorkers.map((workers) => {
    const mine = rounds.get(workers)!;
    return {
      workers,
      runs: plan.throughputRuns,
      rounds: mine,
      runsPerSecond: median(mine.map((r) => r.runsPerSecond)),
    };
  });
  const cpuFloor = plan.throughputWorkers.map((processes, i) => ({
    processes,
    unitsPerSecond: median(floors.map((rows) => rows[i]!.unitsPerSecond)),
    cpuMsPerUnit: median(floors.map((rows) => rows[i]!.cpuMsPerUnit)),
  }));
  return { throughput, cpuFloor };
}

/** Timed runs' threads start with this; warm-up runs' with `warm-`. */
const TIMED = "tput-";

/**
 * One round on a fresh database: the worker processes start paused and warm up
 * ({@link warmUp}); `throughputRuns` one-step runs are POSTed on distinct threads, then the
 * database clock is read and every worker told to go; the round ends at the last run's end
 * (`updated_at` of its row, written with its final status).
 */
async function throughputRound(
  set: RunsSet,
  workers: number,
  plan: WorkersPlan,
  postgresDataDir: string | undefined,
): Promise<ThroughputRound> {
  const runs = plan.throughputRuns;
  const processes = await set.startWorkers(workers, { nodeMs: 0, paused: true });
  await warmUp(set, processes, plan.throughputWarmupRuns * workers);
  await postRuns(set, TIMED, runs);
  const cpu = () => ({
    workers: processes.reduce((sum, p) => sum + (processTicks(p.child.pid!) ?? 0), 0),
    postgres: postgresDataDir ? postgresCpuMs(postgresDataDir) : null,
    machine: machineCpuMs(),
  });
  const cpuAtGo = cpu();
  const goAt = await set.dbNow();
  for (const worker of processes) worker.send({ type: "go" });
  const lastEnd = await set.untilRunsEnd(TIMED, runs, "throughput");
  const cpuAtEnd = cpu();
  const first = await set.store.pool.query<{ ms: string }>(
    `SELECT extract(epoch FROM min(e.created_at)) * 1000 AS ms
       FROM tenxgraph_run_events e JOIN tenxgraph_runs r USING (run_id)
      WHERE e.event->>'type' = 'run_attempt' AND starts_with(r.thread_id, $1)`,
    [TIMED],
  );
  const perWorker = await set.store.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM tenxgraph_runs WHERE starts_with(thread_id, $1)
      GROUP BY worker_id ORDER BY worker_id`,
    [TIMED],
  );
  const seconds = (lastEnd - goAt) / 1000;
  return {
    seconds,
    runsPerSecond: runs / seconds,
    startupMs: Number(first.rows[0]!.ms) - goAt,
    perWorker: perWorker.rows.map((r) => Number(r.n)),
    workerCpuMsPerRun: ((cpuAtEnd.workers - cpuAtGo.workers) * 1000) / clockTicks() / runs,
    postgresCpuMsPerRun:
      cpuAtEnd.postgres === null || cpuAtGo.postgres === null
        ? null
        : (cpuAtEnd.postgres - cpuAtGo.postgres) / runs,
    machineBusy:
      cpuAtEnd.machine && cpuAtGo.machine && cpuAtEnd.machine.total > cpuAtGo.machine.total
        ? (cpuAtEnd.machine.busy - cpuAtGo.machine.busy) /
          (cpuAtEnd.machine.total - cpuAtGo.machine.total)
        : null,
  };
}

/** POSTs `count` runs, each on a thread of its own named `prefix` and its number, 8 at a time. */
export async function postRuns(set: RunsSet, prefix: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) await set.postRun(`${prefix}${next++}`);
    }),
  );
}

/**
 * Runs `count` one-step runs through the paused `processes`, untimed, then pauses them again:
 * the round then times warm processes, as a deployment's long-lived workers are. Each worker
 * takes what it can, as in the timed part; the spread is printed.
 */
export async function warmUp(
  set: RunsSet,
  processes: BenchWorkerProcess[],
  count: number,
): Promise<void> {
  await postRuns(set, "warm-", count);
  for (const worker of processes) worker.send({ type: "go" });
  await set.untilRunsEnd("warm-", count, "throughput warm-up");
  const paused = new Set<BenchWorkerProcess>();
  await new Promise<void>((resolve) => {
    const stop = set.onMessage((message, from) => {
      if (message.type !== "paused") return;
      paused.add(from);
      if (paused.size === processes.length) {
        stop();
        resolve();
      }
    });
    for (const worker of processes) worker.send({ type: "pause" });
  });
  const { rows } = await set.store.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM tenxgraph_runs WHERE starts_with(thread_id, 'warm-')
      GROUP BY worker_id ORDER BY worker_id`,
  );
  console.error(`bench workers: warm-up runs per worker ${rows.map((r) => r.n).join(" / ")}`);
}
