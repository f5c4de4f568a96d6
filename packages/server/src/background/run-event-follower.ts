import pg from "pg";
import { RUN_EVENTS_CHANNEL } from "./run-store.js";

/**
 * Wakes readers of a run's events when a worker (in any process) appends some: one LISTEN
 * connection per process, shared by every stream and join. A reader also wakes after
 * `fallbackMs` without a notification, so a notification lost with a dropped connection costs
 * latency, never an event (readers always read from the table, never from the notification).
 */
export class RunEventFollower {
  readonly #dsn: string;
  readonly #waiters = new Map<string, Set<() => void>>();
  #client: Promise<pg.Client> | null = null;
  #closed = false;

  constructor(postgresDsn: string) {
    this.#dsn = postgresDsn;
  }

  /** Resolves on the next append to `runId`, after `fallbackMs`, or when `signal` aborts. */
  async wait(runId: string, fallbackMs: number, signal?: AbortSignal): Promise<void> {
    await this.#listen().catch(() => {}); // without LISTEN the fallback timer still wakes us
    await new Promise<void>((resolve) => {
      const waiters = this.#waiters.get(runId) ?? new Set();
      this.#waiters.set(runId, waiters);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        waiters.delete(done);
        if (waiters.size === 0) this.#waiters.delete(runId);
        resolve();
      };
      const timer = setTimeout(done, fallbackMs);
      signal?.addEventListener("abort", done, { once: true });
      waiters.add(done);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    if (client) await client.then((c) => c.end()).catch(() => {});
  }

  #listen(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error("RunEventFollower is closed"));
    this.#client ??= this.#connect().catch((error: unknown) => {
      this.#client = null;
      throw error;
    });
    return this.#client;
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.#dsn });
    // A broken connection is replaced on the next wait; the waiters' timers cover the gap.
    const drop = () => {
      this.#client = null;
      client.end().catch(() => {});
    };
    client.on("error", drop);
    client.on("end", () => {
      if (this.#client) this.#client = null;
    });
    client.on("notification", (message) => {
      for (const wake of [...(this.#waiters.get(message.payload ?? "") ?? [])]) wake();
    });
    await client.connect();
    await client.query(`LISTEN ${RUN_EVENTS_CHANNEL}`);
    return client;
  }
}
