import type { LgEvent } from "./lg-stream.js";

/** LangGraph's run status. */
export type LgRunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";

/** A background run this process runs: its record, its events so far, its end. */
export interface LgRunRecord {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: LgRunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: "reject" | "enqueue";
  /** The events sent so far; an event's id is its position, from 1. */
  events: LgEvent[];
  /** Settles when the run has ended (whatever its status). */
  done: Promise<void>;
  /** Aborts the run (`runs.cancel`). */
  abort: AbortController;
  /** Set by `runs.cancel`: the run ends `interrupted` whatever it was doing. */
  cancelled: boolean;
}

/**
 * The background runs of this process (`runs.create`), by run id, with their events for
 * `runs.joinStream` (from `Last-Event-ID`) and `runs.join`. They live as long as the process:
 * the records are not stored (the threads and their ledger are).
 */
export class LgRunRegistry {
  readonly #runs = new Map<string, LgRunRecord>();
  readonly #wakers = new Map<string, Set<() => void>>();

  add(record: LgRunRecord): void {
    this.#runs.set(record.run_id, record);
  }

  get(runId: string): LgRunRecord | undefined {
    return this.#runs.get(runId);
  }

  delete(runId: string): void {
    this.#runs.delete(runId);
  }

  /** The thread's runs, newest first. */
  ofThread(threadId: string): LgRunRecord[] {
    return [...this.#runs.values()].filter((r) => r.thread_id === threadId).reverse();
  }

  /** The thread's run that has not ended yet and was created last, if any. */
  lastActive(threadId: string): LgRunRecord | undefined {
    return this.ofThread(threadId).find((r) => r.status === "pending" || r.status === "running");
  }

  /** Records an event of the run and wakes its followers. */
  push(record: LgRunRecord, event: LgEvent): void {
    record.events.push(event);
    this.#wake(record.run_id);
  }

  /** Sets the run's status and wakes its followers. */
  setStatus(record: LgRunRecord, status: LgRunStatus): void {
    record.status = status;
    record.updated_at = new Date().toISOString();
    this.#wake(record.run_id);
  }

  /** Resolves at the run's next event or status change, or when `signal` aborts. */
  next(runId: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wakers = this.#wakers.get(runId) ?? new Set();
      this.#wakers.set(runId, wakers);
      const wake = () => {
        wakers.delete(wake);
        signal.removeEventListener("abort", wake);
        resolve();
      };
      wakers.add(wake);
      signal.addEventListener("abort", wake, { once: true });
    });
  }

  #wake(runId: string): void {
    for (const wake of [...(this.#wakers.get(runId) ?? [])]) wake();
  }
}

/** A record as LangGraph's `Run`. */
export function lgRunOf(record: LgRunRecord) {
  return {
    run_id: record.run_id,
    thread_id: record.thread_id,
    assistant_id: record.assistant_id,
    created_at: record.created_at,
    updated_at: record.updated_at,
    status: record.status,
    metadata: record.metadata,
    multitask_strategy: record.multitask_strategy,
    kwargs: {},
  };
}
