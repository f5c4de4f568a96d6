import type { Logger } from "@tenxgraph/core";
import type { BackgroundRunEvent } from "./run-record.js";
import type { AttemptRef } from "./run-record.js";
import type { PgRunStore } from "./run-store.js";

/**
 * How long an event waits for the ones after it before the pump sends them (default 10 ms): a
 * run's events come in bursts (`run_start`, `state`, `node_start`, … a node's deltas), and
 * every append is a statement, a commit and a NOTIFY that wakes every follower. A run that ends
 * within the window sends its events with its end, in the statement that writes the end.
 */
export const EVENT_BATCH_MS = 10;

/**
 * Appends an attempt's events to the run in batches: an event waits up to `batchMs` for the
 * ones after it, and while one append is in flight the next events gather, so a burst of token
 * deltas costs a few round trips, in order. A refused append (the attempt lost the run) stops
 * the pump and tells the attempt. Once closed it sends no new batch (a failed one is still
 * retried) and hands back what it holds, for the statement that writes the attempt's end: so
 * the run's status is never written before the events that came ahead of it.
 */
export class EventPump {
  #buffer: BackgroundRunEvent[] = [];
  #flushing: Promise<void> | null = null;
  #waiting: NodeJS.Timeout | null = null;
  #closed = false;
  lost = false;

  constructor(
    private readonly store: PgRunStore,
    private readonly ref: AttemptRef,
    private readonly logger: Logger,
    /** Once the attempt is abandoned its events are dropped: the run is someone else's. */
    private readonly abandoned: AbortSignal,
    private readonly onLost: () => void,
    private readonly batchMs: number = EVENT_BATCH_MS,
  ) {}

  push(event: BackgroundRunEvent): void {
    if (this.lost) return;
    this.#buffer.push(event);
    // An append in flight takes this event next; a batch already waiting takes it with it.
    if (this.#flushing || this.#waiting || this.#closed) return;
    if (this.batchMs <= 0) return this.#flush();
    this.#waiting = setTimeout(() => {
      this.#waiting = null;
      this.#flush();
    }, this.batchMs);
  }

  /** Stops sending once the batch in flight is written; the events not sent yet. */
  async close(): Promise<BackgroundRunEvent[]> {
    this.#closed = true;
    if (this.#waiting) clearTimeout(this.#waiting);
    this.#waiting = null;
    while (this.#flushing) await this.#flushing;
    return this.#buffer.splice(0);
  }

  #flush(): void {
    this.#flushing ??= this.#drain().finally(() => (this.#flushing = null));
  }

  async #drain(): Promise<void> {
    let failures = 0;
    while (
      this.#buffer.length > 0 &&
      !this.lost &&
      !this.abandoned.aborted &&
      !(this.#closed && failures === 0)
    ) {
      const batch = this.#buffer.splice(0);
      try {
        if (!(await this.store.appendEvents(this.ref, batch))) {
          this.lost = true;
          this.onLost();
        }
        failures = 0;
      } catch (error) {
        // Kept in order for the next try; the heartbeat decides whether the run is still ours.
        this.#buffer.unshift(...batch);
        failures += 1;
        this.logger.warn({ err: error, runId: this.ref.runId }, "Could not append run events");
        if (failures >= 20) {
          this.lost = true;
          this.onLost();
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
        if (this.abandoned.aborted) this.#buffer = [];
      }
    }
  }
}
