import type { PgCheckpointer } from "@tenxgraph/postgres";
import { cpuBetween, sampleCpu, type CpuUse } from "../accounting/cpu-sampler.js";
import { median } from "./median.js";
import { PgRawCommit } from "../floor/pg-raw-commit.js";
import { openPgStore, pgLabel, type PgStore, type PgWorkload } from "../tenxgraph/pg-stores.js";
import type { PgBenchContext } from "./pg-workload-bench.js";
import { buildApp, runOnce } from "../tenxgraph/react-loop.js";

/** Rounds of the throughput comparison, and how many threads run at once. */
export interface ConcurrencyPlan {
  warmupRounds: number;
  rounds: number;
  threads: number;
  /** Runs each thread makes back to back, so that one thread runs long enough to time. */
  runsPerThread: number;
  /** Raw commits per connection in each floor measurement. */
  rawCommitsPerConnection: number;
}

/** Steps per second of one thread and of `threads` threads at once, beside the raw floor's. */
export interface ConcurrencyRow {
  store: PgStore;
  turns: number;
  toolsPerTurn: number;
  threads: number;
  /** The checkpointer's pool size: the threads share one pool of this many connections. */
  poolMax: number;
  rounds: number;
  oneThreadStepsPerSecond: number;
  manyThreadsStepsPerSecond: number;
  /** Median over rounds of many threads' steps/s over one thread's in the same round. */
  speedup: number;
  rawOneConnectionCommitsPerSecond: number;
  rawManyConnectionsCommitsPerSecond: number;
  /** The same ratio for raw commits on as many connections as threads. */
  rawSpeedup: number;
  /** CPU per step (medians over rounds) and how busy the machine was, with one thread... */
  oneThreadCpu: CpuPerStep;
  /** ...and with many. */
  manyThreadsCpu: CpuPerStep;
}

export interface CpuPerStep {
  nodeMsPerStep: number;
  postgresMsPerStep: number | null;
  redisMsPerStep: number | null;
  machineBusy: number | null;
}

/** PgCheckpointer's default pool size, which the bench keeps. */
const DEFAULT_POOL_MAX = 10;

/**
 * For each workload: one thread's run, then `threads` runs of it at once on one checkpointer
 * (one process, one pool), then raw commits on one connection and on `threads` connections, a
 * round at a time, so each round's ratios are taken side by side.
 */
export async function measureConcurrency(
  workloads: PgWorkload[],
  plan: ConcurrencyPlan,
  context: PgBenchContext,
): Promise<ConcurrencyRow[]> {
  const rows: ConcurrencyRow[] = [];
  for (const workload of workloads) rows.push(await measureOne(workload, plan, context));
  return rows;
}

async function measureOne(
  workload: PgWorkload,
  plan: ConcurrencyPlan,
  context: PgBenchContext,
): Promise<ConcurrencyRow> {
  const { servers, schemaPrefix, warnings } = context;
  const schema = (use: string) => `${schemaPrefix}_${pgLabel(workload)}_${use}`;
  const checkpointer = openPgStore(servers, workload.store, schema("threads"), warnings);
  const floor = await PgRawCommit.open(servers.postgresDsn, {
    schema: schema("threads_raw"),
    rowBytes: 600,
    connections: plan.threads,
  });
  const rounds: RoundResult[] = [];
  try {
    const runner = new ThreadRunner(workload, checkpointer, context);
    for (let round = 0; round < plan.warmupRounds + plan.rounds; round++) {
      const result = await measureRound(runner, floor, plan);
      if (round >= plan.warmupRounds) rounds.push(result);
    }
  } finally {
    await Promise.all([checkpointer.close(), floor.close()]);
  }
  return summarize(workload, plan, rounds);
}

interface RoundResult {
  one: number;
  many: number;
  rawOne: number;
  rawMany: number;
  oneCpu: CpuPerStep;
  manyCpu: CpuPerStep;
}

async function measureRound(
  runner: ThreadRunner,
  floor: PgRawCommit,
  plan: ConcurrencyPlan,
): Promise<RoundResult> {
  const one = await runner.run(1, plan.runsPerThread);
  const many = await runner.run(plan.threads, plan.runsPerThread);
  const rawOne = await floor.concurrent(1, plan.rawCommitsPerConnection);
  const rawMany = await floor.concurrent(plan.threads, plan.rawCommitsPerConnection);
  return {
    one: one.stepsPerSecond,
    many: many.stepsPerSecond,
    rawOne,
    rawMany,
    oneCpu: perStep(one.cpu, one.steps),
    manyCpu: perStep(many.cpu, many.steps),
  };
}

/** Runs the workload on several threads at once, on one checkpointer, and times them. */
class ThreadRunner {
  readonly #workload: PgWorkload;
  readonly #app: ReturnType<typeof buildApp>;
  readonly #context: PgBenchContext;
  #threads = 0;

  constructor(workload: PgWorkload, checkpointer: PgCheckpointer, context: PgBenchContext) {
    this.#workload = workload;
    this.#app = buildApp(workload, checkpointer);
    this.#context = context;
  }

  /** `threads` threads at once, each making `runsEach` runs one after another. */
  async run(
    threads: number,
    runsEach: number,
  ): Promise<{ stepsPerSecond: number; steps: number; cpu: CpuUse }> {
    const withRedis = this.#workload.store === "postgres+redis";
    const cpuBefore = await sampleCpu(this.#context.servers, withRedis);
    const started = performance.now();
    const steps = await Promise.all(
      Array.from({ length: threads }, () => this.#runInSequence(runsEach)),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuBetween(cpuBefore, await sampleCpu(this.#context.servers, withRedis));
    const total = steps.reduce((sum, n) => sum + n, 0);
    return { stepsPerSecond: total / seconds, steps: total, cpu };
  }

  /** One thread of work: `runs` fresh threads of the workload, one after another. */
  async #runInSequence(runs: number): Promise<number> {
    let steps = 0;
    for (let i = 0; i < runs; i++) {
      steps += (await runOnce(this.#app, this.#workload, `thread-${this.#threads++}`)).steps;
    }
    return steps;
  }
}

function perStep(cpu: CpuUse, steps: number): CpuPerStep {
  const per = (ms: number | null) => (ms === null ? null : ms / steps);
  return {
    nodeMsPerStep: cpu.nodeMs / steps,
    postgresMsPerStep: per(cpu.postgresMs),
    redisMsPerStep: per(cpu.redisMs),
    machineBusy: cpu.machineBusy,
  };
}

function summarize(
  workload: PgWorkload,
  plan: ConcurrencyPlan,
  rounds: RoundResult[],
): ConcurrencyRow {
  const medianOf = (pick: (r: RoundResult) => number) => median(rounds.map(pick));
  return {
    store: workload.store,
    turns: workload.turns,
    toolsPerTurn: workload.toolsPerTurn,
    threads: plan.threads,
    poolMax: DEFAULT_POOL_MAX,
    rounds: rounds.length,
    oneThreadStepsPerSecond: medianOf((r) => r.one),
    manyThreadsStepsPerSecond: medianOf((r) => r.many),
    speedup: medianOf((r) => r.many / r.one),
    rawOneConnectionCommitsPerSecond: medianOf((r) => r.rawOne),
    rawManyConnectionsCommitsPerSecond: medianOf((r) => r.rawMany),
    rawSpeedup: medianOf((r) => r.rawMany / r.rawOne),
    oneThreadCpu: medianCpu(rounds.map((r) => r.oneCpu)),
    manyThreadsCpu: medianCpu(rounds.map((r) => r.manyCpu)),
  };
}

function medianCpu(samples: CpuPerStep[]): CpuPerStep {
  const medianOf = (pick: (c: CpuPerStep) => number | null) => {
    const values = samples.map(pick).filter((v): v is number => v !== null);
    return values.length ? median(values) : null;
  };
  return {
    nodeMsPerStep: medianOf((c) => c.nodeMsPerStep)!,
    postgresMsPerStep: medianOf((c) => c.postgresMsPerStep),
    redisMsPerStep: medianOf((c) => c.redisMsPerStep),
    machineBusy: medianOf((c) => c.machineBusy),
  };
}
