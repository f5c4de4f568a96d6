import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { PostgresServer } from "@tenxgraph/test-servers";
import {
  clockTicks,
  machineCpuMs,
  postgresCpuMs,
  processTicks,
} from "../accounting/cpu-sampler.js";
import { p50p99, type P50P99 } from "../http/percentiles.js";
import { median } from "../measure/median.js";
import { RunsSet } from "./runs-set.js";
import type { BenchWorkerProcess, WorkerMessage } from "./worker-processes.js";

/** How much of each "many workers" measurement to take. */
export interface WorkersPlan {
  takeoverTrials: number;
  /** How long the takeover graph's node works: the SIGKILL lands inside it. */
  takeoverNodeMs: number;
  latencyWarmup: number;
  latencySamples: number;
  /** Runs queued up front per throughput round. */
  throughputRuns: number;
  /** Rounds per worker count, the counts taking turns; the median is reported. */
  throughputRounds: number;
  throughputWorkers: number[];
}

/** The "many workers" sizes: the full run, or `--quick` (a smoke run for CI). */
export function workersPlan(quick: boolean): WorkersPlan {
  return {
    takeoverTrials: quick ? 5 : 20,
    takeoverNodeMs: 2000,
    latencyWarmup: quick ? 2 : 5,
    latencySamples: quick ? 10 : 50,
    throughputRuns: quick ? 40 : 200,
    throughputRounds: quick ? 1 : 3,
    throughputWorkers: [1, 4],
  };
}

/** SIGKILL of the worker holding a run to the run's next attempt beginning on another. */
export interface TakeoverResult {
  trials: number;
  /** Kill to the new attempt's `run_attempt` event, ms (database clock). */
  ms: P50P99;
  /** Kill to the sweep handing the run back (`run_requeued`), ms. */
  detectMs: P50P99;
  /** Hand-back to the new attempt, ms. */
  pickupMs: P50P99;
  maxMs: number;
  samples: number[];
  /** Every run completed, on its second attempt, on another worker. */
  allCompletedOnSecondAttempt: boolean;
}

/** POST to the worker's node starting, one idle worker waiting. */
export interface QueueLatencyResult {
  samples: number;
  /** Date.now() before the POST to Date.now() in the node (same machine, same clock), ms. */
  ms: P50P99;
  /** The POST's own round trip (until the 202), ms. */
  postMs: P50P99;
}

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

/** Everything the "many workers" bench found, as written to results.json. */
export interface WorkersResults {
  postgresql: string;
  load: { atStart: number; atEnd: number };
  plan: WorkersPlan;
  takeover: TakeoverResult;
  queueLatency: QueueLatencyResult;
  throughput: WorkersThroughputRow[];
  /** Runs per second with the most workers over those with one. */
  scaling: number;
}

/**
 * Background runs across worker processes, each measurement set on a fresh database: how long
 * a killed worker's run takes to continue elsewhere, how long a queued run waits for an idle
 * worker, and how runs per second grow from 1 to 4 worker processes. PostgreSQL is started here
 * (fsync on) unless TENXGRAPH_BENCH_POSTGRES_DSN names a server (databases are made and dropped
 * on it). Workers run with the library's default timings (heartbeat 1000 ms, stale after 3000
 * ms, poll 500 ms) and concurrency 1.
 */
export async function measureWorkers(plan: WorkersPlan): Promise<WorkersResults> {
  const atStart = os.loadavg()[0]!;
  const given = process.env.TENXGRAPH_BENCH_POSTGRES_DSN;
  const server = given
    ? undefined
    : await PostgresServer.start({ name: "bench-workers", fsync: true });
  const adminDsn = given ?? server!.dsn;
  try {
    const postgresql = await serverVersion(adminDsn);
    const takeover = await withSet(adminDsn, "takeover", (set) => measureTakeover(set, plan));
    const queueLatency = await withSet(adminDsn, "latency", (set) => measureLatency(set, plan));
    const throughput = await measureThroughput(adminDsn, plan, server?.dataDir);
    const first = throughput[0]!.runsPerSecond;
    const last = throughput.at(-1)!.runsPerSecond;
    return {
      postgresql,
      load: { atStart, atEnd: os.loadavg()[0]! },
      plan,
      takeover,
      queueLatency,
      throughput,
      scaling: last / first,
    };
  } finally {
    await server?.destroy();
  }
}

async function withSet<T>(
  adminDsn: string,
  name: string,
  measure: (set: RunsSet) => Promise<T>,
): Promise<T> {
  const set = await RunsSet.open(adminDsn, name);
  try {
    return await measure(set);
  } finally {
    await set.close();
  }
}

/** The first `node_start` a worker reports for `threadId`, and who reported it. */
function nodeStart(
  set: RunsSet,
  threadId: string,
  timeoutMs = 60_000,
): Promise<{ message: WorkerMessage; from: BenchWorkerProcess }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no node started on ${threadId} after ${timeoutMs} ms`));
    }, timeoutMs);
    const off = set.onMessage((message, from) => {
      if (message.type !== "node_start" || message.threadId !== threadId) return;
      clearTimeout(timer);
      off();
      resolve({ message, from });
    });
  });
}

/**
 * Two idle workers; each trial POSTs a run whose node works `takeoverNodeMs`, SIGKILLs the
 * worker whose node started, at a random point of the next second (so the kill falls anywhere
 * in the heartbeat period), reads the database clock at once, and waits for the run's second
 * `run_attempt` event; its `created_at` minus the kill is the takeover. A new worker replaces
 * the dead one before the next trial.
 */
async function measureTakeover(set: RunsSet, plan: WorkersPlan): Promise<TakeoverResult> {
  await set.startWorkers(2, { nodeMs: plan.takeoverNodeMs });
  const total: number[] = [];
  const detect: number[] = [];
  const pickup: number[] = [];
  let allCompleted = true;
  for (let trial = 0; trial < plan.takeoverTrials; trial++) {
    const threadId = `takeover-${trial}`;
    const started = nodeStart(set, threadId);
    const runId = await set.postRun(threadId);
    const { from: holder } = await started;
    await sleep(Math.random() * 1000);
    holder.kill();
    const killedAt = await set.dbNow();
    const { attemptAt, requeuedAt, takenBy } = await secondAttempt(set, runId);
    total.push(attemptAt - killedAt);
    detect.push(requeuedAt - killedAt);
    pickup.push(attemptAt - requeuedAt);
    const end = await set.join(threadId, runId);
    if (end.status !== "completed" || end.attempts !== 2 || takenBy === holder.workerId) {
      allCompleted = false;
      console.error(
        `bench workers: takeover run ${runId} ended ${JSON.stringify(end)} on ${takenBy}`,
      );
    }
    await holder.exited;
    await set.startWorkers(1, { nodeMs: plan.takeoverNodeMs });
  }
  return {
    trials: plan.takeoverTrials,
    ms: p50p99(total),
    detectMs: p50p99(detect),
    pickupMs: p50p99(pickup),
    maxMs: Math.max(...total),
    samples: total.map((ms) => Math.round(ms)),
    allCompletedOnSecondAttempt: allCompleted,
  };
}

/** Polls the run's events (every 20 ms) for its hand-back and its second attempt; DB times. */
async function secondAttempt(
  set: RunsSet,
  runId: string,
  timeoutMs = 60_000,
): Promise<{ attemptAt: number; requeuedAt: number; takenBy: string }> {
  const giveUp = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await set.store.pool.query<{
      type: string;
      attempt: number | null;
      worker_id: string | null;
      ms: string;
    }>(
      `SELECT event->>'type' AS type, (event->>'attempt')::int AS attempt,
              event->>'workerId' AS worker_id, extract(epoch FROM created_at) * 1000 AS ms
         FROM tenxgraph_run_events
        WHERE run_id = $1 AND event->>'type' IN ('run_attempt', 'run_requeued') ORDER BY seq`,
      [runId],
    );
    const requeued = rows.find((r) => r.type === "run_requeued");
    const attempt = rows.find((r) => r.type === "run_attempt" && r.attempt === 2);
    if (requeued && attempt) {
      return {
        attemptAt: Number(attempt.ms),
        requeuedAt: Number(requeued.ms),
        takenBy: attempt.worker_id ?? "",
      };
    }
    if (Date.now() > giveUp)
      throw new Error(`run ${runId}: no second attempt after ${timeoutMs} ms`);
    await sleep(20);
  }
}

/**
 * One idle worker process waiting; each sample POSTs a run on a new thread and takes Date.now()
 * just before the POST and in the node as it starts (the node sends it over IPC), waits for the
 * run's end, then lets the system idle 100 ms. The first `latencyWarmup` runs are not counted.
 */
async function measureLatency(set: RunsSet, plan: WorkersPlan): Promise<QueueLatencyResult> {
  await set.startWorkers(1, { nodeMs: 0 });
  const latency: number[] = [];
  const post: number[] = [];
  for (let i = 0; i < plan.latencyWarmup + plan.latencySamples; i++) {
    const threadId = `latency-${i}`;
    const started = nodeStart(set, threadId);
    const before = Date.now();
    const runId = await set.postRun(threadId);
    const posted = Date.now();
    const { message } = await started;
    await set.join(threadId, runId);
    if (i >= plan.latencyWarmup) {
      latency.push(message.at! - before);
      post.push(posted - before);
    }
    await sleep(100);
  }
  return { samples: plan.latencySamples, ms: p50p99(latency), postMs: p50p99(post) };
}

/**
 * For each worker count, rounds taking turns (1, 4, 1, 4, …), each on a fresh database: the
 * worker processes start paused, `throughputRuns` one-step runs are POSTed on distinct threads,
 * then the database clock is read and every worker told to go; the round ends at the last run's
 * end (`updated_at` of its row, written with its final status).
 */
async function measureThroughput(
  adminDsn: string,
  plan: WorkersPlan,
  postgresDataDir: string | undefined,
): Promise<WorkersThroughputRow[]> {
  const rounds = new Map<number, ThroughputRound[]>(plan.throughputWorkers.map((w) => [w, []]));
  for (let round = 0; round < plan.throughputRounds; round++) {
    for (const workers of plan.throughputWorkers) {
      const result = await withSet(adminDsn, `tput${workers}`, (set) =>
        throughputRound(set, workers, plan.throughputRuns, postgresDataDir),
      );
      console.error(
        `bench workers: ${workers} worker(s), ${plan.throughputRuns} runs in ${result.seconds.toFixed(2)} s: ${result.runsPerSecond.toFixed(1)} runs/s`,
      );
      rounds.get(workers)!.push(result);
    }
  }
  return plan.throughputWorkers.map((workers) => {
    const mine = rounds.get(workers)!;
    return {
      workers,
      runs: plan.throughputRuns,
      rounds: mine,
      runsPerSecond: median(mine.map((r) => r.runsPerSecond)),
    };
  });
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

async function serverVersion(dsn: string): Promise<string> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>("SHOW server_version");
    return rows[0]!.server_version;
  } finally {
    await client.end();
  }
}
