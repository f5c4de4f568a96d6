import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { PostgresServer } from "@tenxgraph/test-servers";
import type { CpuScalingRow } from "../floor/cpu-scaling.js";
import { p50p99, type P50P99 } from "../http/percentiles.js";
import { median } from "../measure/median.js";
import { measureThroughput, type WorkersThroughputRow } from "./measure-throughput.js";
import { withRunsSet, type RunsSet } from "./runs-set.js";
import type { WorkersPlan } from "./workers-plan.js";
import type { BenchWorkerProcess, WorkerMessage } from "./worker-processes.js";

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
  /** The machine's floor: fixed CPU work in as many processes as workers (medians of the rounds). */
  cpuFloor: CpuScalingRow[];
  /** Units per second of CPU work with the most processes over one: what no runtime can beat. */
  cpuFloorScaling: number;
  /** The most workers could scale here at one worker's CPU per run (null: PostgreSQL's unknown). */
  scalingBound: number | null;
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
    const takeover = await withRunsSet(adminDsn, "takeover", (set) => measureTakeover(set, plan));
    const queueLatency = await withRunsSet(adminDsn, "latency", (set) => measureLatency(set, plan));
    const { throughput, cpuFloor } = await measureThroughput(adminDsn, plan, server?.dataDir);
    const cpuFloorScaling = cpuFloor.at(-1)!.unitsPerSecond / cpuFloor[0]!.unitsPerSecond;
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
      cpuFloor,
      cpuFloorScaling,
      scalingBound: scalingBound(throughput[0]!, cpuFloorScaling),
    };
  } finally {
    await server?.destroy();
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

/**
 * The most the workers' runs per second could grow over one worker's: once the machine is busy
 * it does `floorScaling` times one process's CPU work per second, and a run needs at least the
 * CPU (worker and PostgreSQL) it took with one worker, which had the cores to itself.
 */
function scalingBound(one: WorkersThroughputRow, floorScaling: number): number | null {
  const cpuPerRun = one.rounds.map((r) =>
    r.postgresCpuMsPerRun === null ? null : r.workerCpuMsPerRun + r.postgresCpuMsPerRun,
  );
  if (cpuPerRun.includes(null)) return null;
  const runsPerSecond = (floorScaling * 1000) / median(cpuPerRun as number[]);
  return runsPerSecond / one.runsPerSecond;
}
