import { setTimeout as sleep } from "node:timers/promises";
import {
  clockTicks,
  machineCpuMs,
  postgresCpuMs,
  processTicks,
} from "../accounting/cpu-sampler.js";
import { measureCpuScaling, type CpuScalingRow } from "../floor/cpu-scaling.js";
import { median } from "../measure/median.js";
import { withRunsSet, type RunsSet } from "./runs-set.js";
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
        throughputRound(set, workers, plan.throughputRuns, postgresDataDir),
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

async function throughputRound(
  set: RunsSet,
  workers: number,
  runs: number,
  postgresDataDir: string | undefined,
): Promise<ThroughputRound> {
  const processes = await set.startWorkers(workers, { nodeMs: 0, paused: true });
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < runs) await set.postRun(`tput-${next++}`);
    }),
  );
  const cpu = () => ({
    workers: processes.reduce((sum, p) => sum + (processTicks(p.child.pid!) ?? 0), 0),
    postgres: postgresDataDir ? postgresCpuMs(postgresDataDir) : null,
    machine: machineCpuMs(),
  });
  const cpuAtGo = cpu();
  const goAt = await set.dbNow();
  for (const worker of processes) worker.send({ type: "go" });
  const giveUp = Date.now() + 10 * 60_000;
  let lastEnd: number;
  for (;;) {
    await sleep(50);
    const { rows } = await set.store.pool.query<{
      ended: string;
      completed: string;
      last: string | null;
    }>(
      `SELECT count(*) FILTER (WHERE status NOT IN ('pending', 'running')) AS ended,
              count(*) FILTER (WHERE status = 'completed') AS completed,
              extract(epoch FROM max(updated_at)) * 1000 AS last
         FROM tenxgraph_runs`,
    );
    const row = rows[0]!;
    if (Number(row.ended) === runs) {
      if (Number(row.completed) !== runs)
        throw new Error(`throughput: ${row.completed} of ${runs} runs completed`);
      lastEnd = Number(row.last);
      break;
    }
    if (Date.now() > giveUp)
      throw new Error(`throughput: ${row.ended} of ${runs} runs ended after 10 min`);
  }
  const cpuAtEnd = cpu();
  const first = await set.store.pool.query<{ ms: string }>(
    `SELECT extract(epoch FROM min(created_at)) * 1000 AS ms FROM tenxgraph_run_events
      WHERE event->>'type' = 'run_attempt'`,
  );
  const perWorker = await set.store.pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM tenxgraph_runs GROUP BY worker_id ORDER BY worker_id",
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
