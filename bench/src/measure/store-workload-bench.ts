import type { Loop, Runtime, StoreSpec } from "../loop.js";
import { openLoop } from "../open-loop.js";
import type { Workload } from "../workload.js";
import { accountRuns, shareOf, type StorePlan } from "./plan.js";
import { SideBySide, takeTurns, type Floor } from "./side-by-side.js";

/** The counts of an untimed pass; every store's account knows what a step adds to it. */
interface StepAccount {
  bytesPerStep: number;
}

/** What differs between stores: where each runtime's store is, how it is counted, the floor. */
export interface StoreParts<Account extends StepAccount, Spec extends StoreSpec> {
  /** The store `runtime` uses for `use` ("account": the counted pass; "timed": the rounds). */
  spec(runtime: Runtime, use: "account" | "timed"): Spec;
  /** Counts `runs` runs of `loop`, which is open on `spec`. */
  account(loop: Loop, spec: Spec, runs: number): Promise<Account>;
  /** The floor, with rows as large as what a tenxgraph step adds to its store. */
  floor(rowBytes: number): Promise<Floor & { close(): Promise<void> | void }>;
}

/**
 * One workload on one durable store: each runtime's counts from an untimed pass on a store of
 * its own, then its timed loop on another, taking turns with the floor round by round.
 */
export class StoreWorkloadBench<Account extends StepAccount> {
  readonly sideBySide: SideBySide;
  readonly #accounts: Map<Runtime, Account>;
  readonly #loops: Loop[];
  readonly #floor: { close(): Promise<void> | void };

  private constructor(
    sideBySide: SideBySide,
    accounts: Map<Runtime, Account>,
    loops: Loop[],
    floor: { close(): Promise<void> | void },
  ) {
    this.sideBySide = sideBySide;
    this.#accounts = accounts;
    this.#loops = loops;
    this.#floor = floor;
  }

  static async open<Account extends StepAccount, Spec extends StoreSpec>(
    workload: Workload,
    runtimes: Runtime[],
    plan: StorePlan,
    parts: StoreParts<Account, Spec>,
  ): Promise<StoreWorkloadBench<Account>> {
    const accounts = new Map<Runtime, Account>();
    for (const runtime of runtimes) {
      const spec = parts.spec(runtime, "account");
      const loop = await openLoop(runtime, workload, spec);
      try {
        accounts.set(
          runtime,
          await parts.account(loop, spec, accountRuns(plan, runtime, workload)),
        );
      } finally {
        await loop.close();
      }
    }
    const floor = await parts.floor(accounts.get("tenxgraph")!.bytesPerStep);
    const loops = await Promise.all(
      runtimes.map((runtime) => openLoop(runtime, workload, parts.spec(runtime, "timed"))),
    );
    const sideBySide = new SideBySide(
      workload,
      loops.map((loop) => ({ loop, share: shareOf(plan, loop.runtime, workload) })),
      floor,
      plan,
    );
    return new StoreWorkloadBench(sideBySide, accounts, loops, floor);
  }

  /** Each runtime's counts; LangGraph.js's is null where it has no saver for the store. */
  accounts(): { tenxgraph: Account; langgraph: Account | null } {
    return {
      tenxgraph: this.#accounts.get("tenxgraph")!,
      langgraph: this.#accounts.get("langgraph") ?? null,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.#floor.close(), ...this.#loops.map((loop) => loop.close())]);
  }
}

/**
 * Opens a bench for each workload, lets them take turns a round at a time (so a busy spell of
 * the machine or its disk falls on all rows alike), and returns each one's row.
 */
export async function measureWorkloads<W extends Workload, Account extends StepAccount, Row>(
  workloads: W[],
  plan: StorePlan,
  open: (workload: W) => Promise<StoreWorkloadBench<Account>>,
  row: (workload: W, bench: StoreWorkloadBench<Account>) => Row,
): Promise<Row[]> {
  const benches: StoreWorkloadBench<Account>[] = [];
  try {
    for (const workload of workloads) benches.push(await open(workload));
    await takeTurns(
      benches.map((bench) => bench.sideBySide),
      plan,
    );
    return benches.map((bench, i) => row(workloads[i]!, bench));
  } finally {
    for (const bench of benches) await bench.close();
  }
}
