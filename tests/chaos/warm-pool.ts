import type { AgentParams } from "../crash/support/agent-params.js";
import { AGENT_WORKER } from "../crash/support/crash-scene.js";
import { WorkerProcess } from "../support/worker-process.js";

/** How long a process may take to load before the pool gives up on it. */
const WARM_TIMEOUT_MS = 120_000;

/**
 * Agent worker processes started ahead of time, each waiting for the params of a run. Loading
 * Node.js, tsx and the packages takes a second or more on a busy machine, more than a run: a run
 * handed to a warm process starts at once, and a process that was not killed serves the next
 * run (each run opens and closes its own store connection). So the run's time goes to runs and
 * kills, and a killed process is the only one to replace.
 */
export class WarmPool {
  readonly #size: number;
  readonly #idle: WorkerProcess[] = [];
  readonly #starting = new Set<WorkerProcess>();
  readonly #busy = new Set<WorkerProcess>();
  /** Killed here, as surplus: their exit is no news. */
  readonly #discarded = new WeakSet<WorkerProcess>();
  #closed = false;

  readonly #onIdleExit: (why: string) => void;

  /** `onIdleExit` hears of a process that died while it ran nothing (and was not killed here). */
  constructor(size: number, onIdleExit: (why: string) => void) {
    this.#size = size;
    this.#onIdleExit = onIdleExit;
    this.#refill();
  }

  /** A process running `params`: an idle one if one is ready, else one started now. */
  take(params: AgentParams): WorkerProcess {
    const worker = this.#takeIdle() ?? this.#start();
    this.#busy.add(worker);
    // The run's messages start now, even when its params must wait for the process to load:
    // a disruption aimed at the run holds this list (before, a run handed to a process still
    // loading was never disrupted: its hung tool was never killed and timed out instead).
    worker.startJob();
    const job = { type: "params", params } as const;
    if (this.#starting.has(worker)) {
      // Started just now: it gets the params once it says it is ready.
      void worker.waitForType("warm", WARM_TIMEOUT_MS).then(
        () => worker.send(job),
        () => void worker.kill(),
      );
    } else {
      worker.send(job);
    }
    // Back to the pool once served; a killed one is gone, and replaced.
    void worker.waitForType("served", 2_147_483_647).then(
      () => this.#returned(worker),
      () => this.#gone(worker),
    );
    this.#refill();
    return worker;
  }

  /** Kills the processes not running anything. */
  async close(): Promise<void> {
    this.#closed = true;
    const idle = [...this.#idle, ...[...this.#starting].filter((w) => !this.#busy.has(w))];
    this.#idle.length = 0;
    await Promise.all(idle.map((worker) => worker.kill()));
  }

  /** An idle process that is still there (one may die while idle; see `#start`). */
  #takeIdle(): WorkerProcess | undefined {
    for (let worker = this.#idle.shift(); worker; worker = this.#idle.shift()) {
      if (worker.child.connected) return worker;
    }
    return undefined;
  }

  #returned(worker: WorkerProcess): void {
    this.#busy.delete(worker);
    if (!this.#closed && this.#idle.length < this.#size) return void this.#idle.push(worker);
    this.#discarded.add(worker);
    void worker.kill();
  }

  #gone(worker: WorkerProcess): void {
    this.#busy.delete(worker);
    this.#refill();
  }

  #start(): WorkerProcess {
    const worker = new WorkerProcess(AGENT_WORKER, { awaitParams: true });
    this.#starting.add(worker);
    void worker.exited.then((exit) => {
      if (this.#busy.has(worker) || this.#closed || this.#discarded.has(worker)) return;
      this.#idle.splice(this.#idle.indexOf(worker) >>> 0, 1);
      this.#refill();
      // A SIGKILL comes from the run: one aimed at a run that ended a moment before it landed.
      if (exit.signal === "SIGKILL") return;
      // Not running anything, not killed by us: whatever it printed says why.
      this.#onIdleExit(`an idle worker exited ${JSON.stringify(exit)}\n${worker.stderr}`);
    });
    void worker.waitForType("warm", WARM_TIMEOUT_MS).then(
      () => {
        this.#starting.delete(worker);
        if (this.#busy.has(worker)) return; // taken while it loaded
        if (this.#closed) void worker.kill();
        else this.#idle.push(worker);
      },
      () => {
        // It died while loading (the pool closed, or the machine is in trouble): the next
        // take() starts another, so nothing waits on this one.
        this.#starting.delete(worker);
        void worker.kill();
      },
    );
    return worker;
  }

  #refill(): void {
    const ready = () =>
      this.#idle.length + [...this.#starting].filter((w) => !this.#busy.has(w)).length;
    while (!this.#closed && ready() < this.#size) this.#start();
  }
}
