import type { Checkpointer } from "../storage/checkpointer.js";
import type { AttemptRef } from "../ledger/ledger-entry.js";
import type { Logger } from "../events/logger.js";

/**
 * While a run is active, polls the store once per interval for stop requests made by any process
 * after the run started, and heartbeats the ledger claims the run holds, renewing their lease
 * (this runtime's `claimStaleAfterMs`), so other executions can tell a live claim from one left
 * by a crash.
 */
export class RunWatch {
  readonly #inFlight = new Set<AttemptRef>();
  readonly #timer: NodeJS.Timeout;
  #busy = false;

  constructor(
    private readonly options: {
      checkpointer: Checkpointer;
      threadId: string;
      /** Stop requests counted when the run started; only later ones are for this run. */
      stopRequestsAtStart: number;
      intervalMs: number;
      /** How long each heartbeat keeps the claims live: this runtime's `claimStaleAfterMs`. */
      leaseMs: number;
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
    try {
      // Separately, stop first: failing heartbeats must not keep a stop request from being seen.
      await this.#pollStop();
      await this.#heartbeat();
    } finally {
      this.#busy = false;
    }
  }

  async #pollStop(): Promise<void> {
    const { checkpointer, threadId, logger, stopRequestsAtStart } = this.options;
    try {
      if ((await checkpointer.countStopRequests(threadId)) > stopRequestsAtStart) {
        this.options.onStopRequested();
      }
    } catch (error) {
      // A store blip must not end the run; the next tick tries again.
      logger.warn({ err: error }, "Could not poll for stop requests");
    }
  }

  async #heartbeat(): Promise<void> {
    if (this.#inFlight.size === 0) return;
    const { checkpointer, threadId, logger, leaseMs } = this.options;
    try {
      await checkpointer.heartbeatCalls(threadId, [...this.#inFlight], leaseMs);
    } catch (error) {
      logger.warn({ err: error }, "Could not heartbeat the ledger claims this run holds");
    }
  }
}
