import { cpuBetween, sampleCpu, type CpuUse } from "../accounting/cpu-sampler.js";
import type { PgRawCommit } from "../floor/pg-raw-commit.js";
import type { Loop, Runtime, StoreSpec } from "../loop.js";
import { openLoop } from "../open-loop.js";
import type { BenchServers } from "../servers/bench-servers.js";
import type { Workload } from "../workload.js";
import { median } from "./median.js";

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

/** One store and workload to run with one thread and with many, for each runtime. */
export interface ConcurrencyCase {
  store: string;
  workload: Workload;
  runtimes: Runtime[];
  /** The store each runtime's loop uses (one per runtime, shared by its threads). */
  spec: (runtime: Runtime) => StoreSpec;
  /** Raw commits on as many connections as threads, where the store is a server. */
  openFloor?: () => Promise<PgRawCommit>;
  /** The servers whose CPU is read (none for a store inside this process). */
  servers?: BenchServers;
  /** The pool the threads share, when the store has one (the default of both runtimes). */
  poolMax: number | null;
}

/** CPU per step, and how busy the machine was. */
export interface CpuPerStep {
  nodeMsPerStep: number;
  postgresMsPerStep: number | null;
  redisMsPerStep: number | null;
  machineBusy: number | null;
}

/** One runtime's steps per second with one thread and with many. */
export interface ThreadFigures {
  runtime: Runtime;
  oneThreadStepsPerSecond: number;
  manyThreadsStepsPerSecond: number;
  /** Median over rounds of many threads' steps/s over one thread's in the same round. */
  speedup: number;
  oneThreadCpu: CpuPerStep;
  manyThreadsCpu: CpuPerStep;
}

/** Steps per second of one thread and of `threads` threads at once, per runtime. */
export interface ConcurrencyRow extends Workload {
  store: string;
  threads: number;
  poolMax: number | null;
  rounds: number;
  runtimes: ThreadFigures[];
  /**
   * tenxgraph's time per step over LangGraph's (LangGraph's steps/s over tenxgraph's), median
   * over rounds of each round's ratio: below 1, tenxgraph is faster, as in every other ratio.
   */
  oneThreadRatio: number | null;
  manyThreadsRatio: number | null;
  /** Raw commits/s on one connection and on `threads` at once, where the store is a server. */
  raw: { oneConnection: number; manyConnections: number; speedup: number } | null;
}

/**
 * For each case, per round: each runtime's one thread, then its `threads` threads at once on
 * one store (one process, one pool), then raw commits on one connection and on `threads`
 * connections, so each round's ratios are taken side by side.
 */
export async function measureConcurrency(
  cases: ConcurrencyCase[],
  plan: ConcurrencyPlan,
): Promise<ConcurrencyRow[]> {
  const rows: ConcurrencyRow[] = [];
  for (const one of cases) rows.push(await measureCase(one, plan));
  return rows;
}

interface RoundResult {
  runtimes: Map<Runtime, { one: ThreadRun; many: ThreadRun }>;
  raw: { one: number; many: number } | null;
}

interface ThreadRun {
  stepsPerSecond: number;
  cpu: CpuPerStep;
}

async function measureCase(one: ConcurrencyCase, plan: ConcurrencyPlan): Promise<ConcurrencyRow> {
  const loops = await Promise.all(
    one.runtimes.map((runtime) => openLoop(runtime, one.workload, one.spec(runtime))),
  );
  const floor = await one.openFloor?.();
  const rounds: RoundResult[] = [];
  try {
    const runners = loops.map((loop) => new ThreadRunner(loop, one));
    for (let round = 0; round < plan.warmupRounds + plan.rounds; round++) {
      const result: RoundResult = { runtimes: new Map(), raw: null };
      for (const runner of runners) {
        const oneThread = await runner.run(1, plan.runsPerThread);
        const manyThreads = await runner.run(plan.threads, plan.runsPerThread);
        result.runtimes.set(runner.runtime, { one: oneThread, many: manyThreads });
      }
      if (floor) {
        result.raw = {
          one: await floor.concurrent(1, plan.rawCommitsPerConnection),
          many: await floor.concurrent(plan.threads, plan.rawCommitsPerConnection),
        };
      }
      if (round >= plan.warmupRounds) rounds.push(result);
    }
  } finally {
    await Promise.all([floor?.close(), ...loops.map((loop) => loop.close())]);
  }
  return summarize(one, plan, rounds);
}

/** Runs one loop on several threads at once and times them. */
class ThreadRunner {
  readonly runtime: Runtime;
  readonly #loop: Loop;
  readonly #case: ConcurrencyCase;
  #threads = 0;

  constructor(loop: Loop, one: ConcurrencyCase) {
    this.runtime = loop.runtime;
    this.#loop = loop;
    this.#case = one;
  }

  /** `threads` threads at once, each making `runsEach` runs one after another. */
  async run(threads: number, runsEach: number): Promise<ThreadRun> {
    const withRedis = this.#case.store === "postgres+redis";
    const cpuBefore = await sampleCpu(this.#case.servers, withRedis);
    const started = performance.now();
    const steps = await Promise.all(
      Array.from({ length: threads }, () => this.#runInSequence(runsEach)),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuBetween(cpuBefore, await sampleCpu(this.#case.servers, withRedis));
    const total = steps.reduce((sum, n) => sum + n, 0);
    return { stepsPerSecond: total / seconds, cpu: perStep(cpu, total) };
  }

  /** One thread of work: `runs` fresh threads of the workload, one after another. */
  async #runInSequence(runs: number): Promise<number> {
    let steps = 0;
    for (let i = 0; i < runs; i++) {
      steps += (await this.#loop.run(`thread-${this.#threads++}`)).steps;
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
  one: ConcurrencyCase,
  plan: ConcurrencyPlan,
  rounds: RoundResult[],
): ConcurrencyRow {
  const medianOf = (pick: (r: RoundResult) => number) => median(rounds.map(pick));
  const of = (r: RoundResult, runtime: Runtime) => r.runtimes.get(runtime)!;
  const ratio = (which: "one" | "many") =>
    one.runtimes.includes("tenxgraph") && one.runtimes.includes("langgraph")
      ? medianOf(
          (r) =>
            of(r, "langgraph")[which].stepsPerSecond / of(r, "tenxgraph")[which].stepsPerSecond,
        )
      : null;
  return {
    store: one.store,
    ...one.workload,
    threads: plan.threads,
    poolMax: one.poolMax,
    rounds: rounds.length,
    runtimes: one.runtimes.map((runtime) => ({
      runtime,
      oneThreadStepsPerSecond: medianOf((r) => of(r, runtime).one.stepsPerSecond),
      manyThreadsStepsPerSecond: medianOf((r) => of(r, runtime).many.stepsPerSecond),
      speedup: medianOf(
        (r) => of(r, runtime).many.stepsPerSecond / of(r, runtime).one.stepsPerSecond,
      ),
      oneThreadCpu: medianCpu(rounds.map((r) => of(r, runtime).one.cpu)),
      manyThreadsCpu: medianCpu(rounds.map((r) => of(r, runtime).many.cpu)),
    })),
    oneThreadRatio: ratio("one"),
    manyThreadsRatio: ratio("many"),
    raw: rounds[0]?.raw
      ? {
          oneConnection: medianOf((r) => r.raw!.one),
          manyConnections: medianOf((r) => r.raw!.many),
          speedup: medianOf((r) => r.raw!.many / r.raw!.one),
        }
      : null,
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
