import type { Checkpointer } from "../storage/checkpointer.js";
import type { AttemptRef } from "../ledger/ledger-entry.js";
import type { Logger } from "../events/logger.js";

/** The abort reason of a stopped run. Internal: a stop is a result, never an error. */
export class StopSignal {
  constructor(readonly source: "stop()" | "signal" | "stream closed") {}
}

/** True for the abort reason of a stopped run. */
export function isStopSignal(value: unknown): value is StopSignal {
  return value instanceof StopSignal;
}

/**
 * While a run is active, polls the store once per interval for a stop request made by any
 * process, and heartbeats the ledger claims the run holds, so other executions can tell a live
 * claim from one left by a crash.
 */
export class RunWatch {
  readonly #inFlight = new Set<AttemptRef>();
  readonly #timer: NodeJS.Timeout;
  #busy = false;

  constructor(
    private readonly options: {
      checkpointer: Checkpointer;
      threadId: string;
      intervalMs: number;
      logger: Logger;
      onStopRequested: () => void;
    },
  ) {
    this.#timer = setInterval(() => void this.#tick(), options.intervalMs);
    this.#timer.unref();
  }

  /** Registers a claim for heartbeats until the returned function is called. */
  hold(attempt: AttemptRef): () => void {
    this.#inFlight.add(attempt);
    return () => this.#inFlight.delete(attempt);
  }

  dispose(): void {
    clearInterval(this.#timer);
    this.#inFlight.clear();
  }

  async #tick(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    const { checkpointer, threadId, logger } = this.options;
    try {
      if (this.#inFlight.size > 0) {
        await checkpointer.heartbeatCalls(threadId, [...this.#inFlight]);
      }
      if (await checkpointer.isStopRequested(threadId)) this.options.onStopRequested();
    } catch (error) {
      // A store blip must not end the run; the next tick tries again.
      logger.warn({ err: error }, "Could not poll for stop requests or heartbeat claims");
    } finally {
      this.#busy = false;
    }
  }
}
