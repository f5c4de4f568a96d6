import type { Loop, LoopRun, Runtime, StoreTimesPerRun } from "../loop.js";
import { stepsPerRun, toolCallsPerRun, type Workload } from "../workload.js";
import { median } from "./median.js";

/** The floor a store's steps are compared with: what a step costs with no runtime at all. */
export interface Floor {
  /** Does the floor's work for `steps` steps; returns its ms per step. */
  msPerStep(steps: number): Promise<number>;
}

/** How many rounds a runtime takes part in: a slow one may sit some out. */
export interface Share {
  warmupRounds: number;
  rounds: number;
  /** About how many steps it runs per round (at least one run). */
  stepsPerRound: number;
}

/** One runtime's timings on one workload and store. */
export interface RuntimeTimes {
  runtime: Runtime;
  /** Measured rounds it took part in, and its timed runs in them. */
  rounds: number;
  runs: number;
  /** Median over runs of the run's ms over its node steps. */
  msPerStep: number;
  /** Median over runs of the run's ms over its tool calls. */
  msPerToolCall: number;
  /** Median over runs of the run's ms per step over the floor's, measured right after the run. */
  floorRatio: number;
  /** tenxgraph's store methods (medians over runs); null for LangGraph, whose saver is not timed. */
  store: StoreTimesPerRun | null;
}

/** The runtimes side by side on one workload and store. */
export interface SideBySideTimes {
  /** Median of every floor measurement (each right after a run, as many steps as it took). */
  floorMsPerStep: number;
  tenxgraph: RuntimeTimes;
  langgraph: RuntimeTimes | null;
  /**
   * tenxgraph / LangGraph.js: the median over the rounds both took part in of the ratio of their
   * median ms per step in that round, so a slow spell of the machine lands on both sides.
   */
  ratio: number | null;
}

interface Sample {
  round: number;
  run: LoopRun;
  floorMsPerStep: number;
}

/**
 * Times several runtimes' loops of one workload, a round at a time, so a bench can take turns
 * between workloads and runtimes. Each run is followed by the floor's work for as many steps
 * as the run took, so noise falls on the runtime and the floor alike.
 */
export class SideBySide {
  readonly #workload: Workload;
  readonly #loops: { loop: Loop; share: Share; samples: Sample[] }[];
  readonly #floor: Floor;
  readonly #allRounds: { warmupRounds: number; rounds: number };
  #threads = 0;

  /** `shares` says each runtime's part; `allRounds` is the plan the bench's rounds follow. */
  constructor(
    workload: Workload,
    loops: { loop: Loop; share: Share }[],
    floor: Floor,
    allRounds: { warmupRounds: number; rounds: number },
  ) {
    this.#workload = workload;
    this.#loops = loops.map((l) => ({ ...l, samples: [] }));
    this.#floor = floor;
    this.#allRounds = allRounds;
  }

  /** Round `round` of the plan (warm-ups first): each runtime whose turn it is runs. */
  async round(round: number): Promise<void> {
    for (const entry of this.#loops) {
      const measured = takesPart(entry.share, this.#allRounds, round);
      if (measured === null) continue;
      const runs = Math.max(1, Math.round(entry.share.stepsPerRound / stepsPerRun(this.#workload)));
      for (let i = 0; i < runs; i++) {
        const run = await entry.loop.run(`${entry.loop.runtime}-${this.#threads++}`);
        const floorMsPerStep = await this.#floor.msPerStep(run.steps);
        if (measured) entry.samples.push({ round, run, floorMsPerStep });
      }
    }
  }

  result(): SideBySideTimes {
    const times = this.#loops.map((l) => runtimeTimes(l.loop.runtime, l.samples, this.#workload));
    const find = (runtime: Runtime) => times.find((t) => t.runtime === runtime) ?? null;
    const tenxgraph = find("tenxgraph");
    if (!tenxgraph) throw new Error("SideBySide: tenxgraph was not measured");
    return {
      floorMsPerStep: median(this.#loops.flatMap((l) => l.samples.map((s) => s.floorMsPerStep))),
      tenxgraph,
      langgraph: find("langgraph"),
      ratio: this.#pairedRatio("tenxgraph", "langgraph"),
    };
  }

  /** Median over shared rounds of `a`'s median ms per step in the round over `b`'s. */
  #pairedRatio(a: Runtime, b: Runtime): number | null {
    const perRound = (runtime: Runtime) => {
      const samples = this.#loops.find((l) => l.loop.runtime === runtime)?.samples ?? [];
      const rounds = new Map<number, number[]>();
      for (const s of samples) rounds.set(s.round, [...(rounds.get(s.round) ?? []), msPerStep(s)]);
      return new Map([...rounds].map(([round, values]) => [round, median(values)]));
    };
    const left = perRound(a);
    const right = perRound(b);
    const ratios = [...left].flatMap(([round, ms]) =>
      right.has(round) ? [ms / right.get(round)!] : [],
    );
    return ratios.length ? median(ratios) : null;
  }
}

/**
 * Whether a runtime with `share` runs in `round`: null if not, false in a warm-up round (its
 * warm-ups are the plan's last ones), true in a measured one (spread evenly over the plan's).
 */
function takesPart(
  share: Share,
  plan: { warmupRounds: number; rounds: number },
  round: number,
): boolean | null {
  if (round < plan.warmupRounds) {
    return round >= plan.warmupRounds - share.warmupRounds ? false : null;
  }
  const measured = round - plan.warmupRounds;
  const rounds = Math.min(share.rounds, plan.rounds);
  const turn = (m: number) => Math.floor((m * rounds) / plan.rounds);
  return turn(measured + 1) > turn(measured) ? true : null;
}

function msPerStep(sample: Sample): number {
  return sample.run.ms / sample.run.steps;
}

function runtimeTimes(runtime: Runtime, samples: Sample[], workload: Workload): RuntimeTimes {
  const stores = samples.flatMap((s) => (s.run.store ? [s.run.store] : []));
  const medianOf = (pick: (t: StoreTimesPerRun) => number) => median(stores.map(pick));
  return {
    runtime,
    rounds: new Set(samples.map((s) => s.round)).size,
    runs: samples.length,
    msPerStep: median(samples.map(msPerStep)),
    msPerToolCall: median(samples.map((s) => s.run.ms / Math.max(1, toolCallsPerRun(workload)))),
    floorRatio: median(samples.map((s) => msPerStep(s) / s.floorMsPerStep)),
    store: stores.length
      ? {
          msPerWrite: medianOf((t) => t.msPerWrite),
          ledgerMsPerToolCall: medianOf((t) => t.ledgerMsPerToolCall),
          storeMsPerStep: medianOf((t) => t.storeMsPerStep),
        }
      : null,
  };
}

/**
 * Runs every bench's round `r` before any bench's round `r + 1`, so the workloads and runtimes
 * take turns and a busy spell of the shared machine falls on all of them alike.
 */
export async function takeTurns(
  benches: SideBySide[],
  plan: { warmupRounds: number; rounds: number },
): Promise<void> {
  for (let round = 0; round < plan.warmupRounds + plan.rounds; round++) {
    for (const bench of benches) await bench.round(round);
  }
}
