import { ClaimLostError } from "../errors/errors.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import type { AttemptRef } from "../storage/ledger-entry.js";
import type { Logger } from "../events/logger.js";

/** A ledger claim this run heartbeats until it is released. */
export interface HeldClaim {
  /** Stops heartbeating the claim: its fate is written, or the call ended. */
  release(): void;
  /**
   * Set by whoever is acting on the claim (a running tool, a reconcile) and cleared when it
   * returns: called once if a heartbeat finds the claim taken over, to abort that work.
   */
  onLost?: (error: ClaimLostError) => void;
}

/**
 * While a run is active, polls the store once per interval for stop requests made by any process
 * after the run started, and heartbeats the ledger claims the run holds, renewing their lease
 * (this runtime's `claimStaleAfterMs`), so other executions can tell a live claim from one left
 * by a crash. A claim a heartbeat finds taken over (this process was paused past its lease) is
 * dropped, and the work acting on it is aborted: a zombie must not keep acting.
 */
export class RunWatch {
  readonly #inFlight = new Map<AttemptRef, HeldClaim>();
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

  /** Registers a claim for heartbeats until its `release()` is called. */
  hold(attempt: AttemptRef): HeldClaim {
    const held: HeldClaim = { release: () => this.#inFlight.delete(attempt) };
    this.#inFlight.set(attempt, held);
    return held;
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
    const sent = [...this.#inFlight.keys()];
    let lost: AttemptRef[];
    try {
      lost = await checkpointer.heartbeatCalls(threadId, sent, leaseMs);
    } catch (error) {
      logger.warn({ err: error }, "Could not heartbeat the ledger claims this run holds");
      return;
    }
    const byId = new Map(sent.map((ref) => [attemptId(ref), ref]));
    for (const { key, attempt } of lost) {
      const ref = byId.get(attemptId({ key, attempt }));
      const held = ref && this.#inFlight.get(ref);
      // Released meanwhile (its result was recorded as the heartbeat ran): nothing to stop.
      if (!ref || !held) continue;
      this.#inFlight.delete(ref);
      held.onLost?.(new ClaimLostError(threadId, key, attempt));
    }
  }
}

function attemptId({ key, attempt }: AttemptRef): string {
  return JSON.stringify([key, attempt]);
}
