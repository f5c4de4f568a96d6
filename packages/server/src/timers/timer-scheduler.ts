import { isTenxgraphError, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import { invokeAsHost } from "@tenxgraph/core/host";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { track } from "../http/shutdown.js";
import type { ThreadsContext } from "../threads/threads-context.js";
import { servedGraphOf, storedGraphId, type ServedGraph } from "../wire/thread-name-field.js";

/** Settings of {@link TimerScheduler}. */
export interface TimerSchedulerOptions {
  /**
   * The graph, its checkpointer and the shutdown tracking: the app's context (`app.context`).
   * With `graphs` (a server of several `langgraph.json` graphs), a thread is resumed under the
   * graph its runs ran (`metadata.graph_id`), else under `graph`.
   */
  ctx: ThreadsContext & { graphs?: { byId: ReadonlyMap<string, CompiledGraph<BaseState>> } };
  /** How often it looks for threads newly paused on a timer (default 1000 ms). */
  intervalMs?: number;
  /**
   * With a run queue: hands each thread found paused on a timer to it (the queue's delayed job,
   * keyed by thread and version, resumes it) instead of resuming it in this process. Catches
   * the threads paused outside background runs (`POST /v1/graph/invoke`).
   */
  queue?: (threadId: string) => Promise<void>;
}

/** `setTimeout`'s longest delay; a later wake is re-armed when this one fires. */
const MAX_DELAY_MS = 2_147_483_647;

/**
 * Commits of concurrent writers need not land in the order of their timestamps: each pass
 * re-reads this much before the newest write the previous pass saw.
 */
const CLOCK_SLACK_MS = 5_000;

/** The timer armed for a thread: the version it paused at, and its `setTimeout` (none when queued). */
interface ArmedTimer {
  version: number;
  handle: NodeJS.Timeout | null;
}

/**
 * Runs durable timers in one process, for a server without a run queue (SQLite): it finds the
 * threads paused on an interrupt with a `resumeAt` (`ctx.sleep`, `interrupt(v, { resumeAt })`)
 * and resumes each at its time with the answer `null`.
 *
 * Finding them: the first pass reads every top-level thread; later ones read the listing (most
 * recently paused first) only down to the threads the previous pass saw, so a pass costs one
 * small query when nothing paused. Threads paused by any process sharing the checkpointer are
 * found. Resuming at most once: the resume starts from the checkpoint read when the timer fires
 * and is a compare-and-swap on its version, so when two processes fire the same timer, or a
 * human answered first, every other write is refused (`STORAGE_CONFLICT_001`) and nothing of it
 * is applied.
 */
export class TimerScheduler {
  readonly #ctx: TimerSchedulerOptions["ctx"];
  readonly #intervalMs: number;
  readonly #queue: ((threadId: string) => Promise<void>) | null;
  readonly #armed = new Map<string, ArmedTimer>();
  #interval: NodeJS.Timeout | null = null;
  #pass: Promise<void> | null = null;
  /** The newest `updatedAt` (epoch ms) the last pass read; `-Infinity` before the first. */
  #seenUntil = Number.NEGATIVE_INFINITY;
  #stopped = false;

  constructor(options: TimerSchedulerOptions) {
    this.#ctx = options.ctx;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#queue = options.queue ?? null;
  }

  /** Reads every paused thread at once, then looks for new ones every `intervalMs`. */
  start(): void {
    if (this.#interval) return;
    this.#stopped = false;
    const pass = () => {
      this.#pass ??= this.scan()
        .catch((error: unknown) => this.#ctx.logger.warn({ err: error }, "Timer pass failed"))
        .finally(() => (this.#pass = null));
    };
    pass();
    this.#interval = setInterval(pass, this.#intervalMs);
    this.#interval.unref();
  }

  /** Disarms every timer; resumes in progress are the server's to wait for (`activeRuns`). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#interval) clearInterval(this.#interval);
    this.#interval = null;
    for (const { handle } of this.#armed.values()) if (handle) clearTimeout(handle);
    this.#armed.clear();
    await this.#pass;
  }

  /** The threads with a timer armed in this process, with the version each paused at. */
  get armed(): Map<string, number> {
    return new Map([...this.#armed].map(([threadId, { version }]) => [threadId, version]));
  }

  /** One pass: arms the timers of threads paused since the previous pass (all, the first time). */
  async scan(): Promise<void> {
    const cutoff = this.#seenUntil - CLOCK_SLACK_MS;
    const pageSize = 50;
    for (let offset = 0; ; offset += pageSize) {
      const page = await this.#ctx.checkpointer.listThreads({ limit: pageSize, offset });
      for (const thread of page) {
        const updatedAt = Date.parse(thread.updatedAt);
        // Listed by their last status change, which no later entry's can be after: past the
        // cutoff, every thread left paused before the previous pass read it.
        if (updatedAt < cutoff) return;
        this.#seenUntil = Math.max(this.#seenUntil, updatedAt);
        if (
          thread.status === "interrupted" &&
          this.#armed.get(thread.threadId)?.version !== thread.version
        ) {
          await this.#consider(thread.threadId);
        }
      }
      if (page.length < pageSize) return;
    }
  }

  /** Reads the thread and arms its earliest timer, if it is paused on one. */
  async #consider(threadId: string): Promise<void> {
    const checkpoint = await this.#ctx.checkpointer.getCheckpoint(threadId);
    const wake = checkpoint && earliestTimer(checkpoint);
    const armed = this.#armed.get(threadId);
    if (armed && armed.version === checkpoint?.version) return;
    if (armed?.handle) clearTimeout(armed.handle);
    this.#armed.delete(threadId);
    if (!checkpoint || !wake || this.#stopped) return;
    if (this.#queue) {
      await this.#queue(threadId);
      this.#armed.set(threadId, { version: checkpoint.version, handle: null });
      return;
    }
    if (!this.#graphOf(checkpoint)) {
      // Armed without a timeout: looked at again only once the thread changes.
      this.#armed.set(threadId, { version: checkpoint.version, handle: null });
      const graphId = storedGraphId(checkpoint.values);
      this.#ctx.logger.warn(
        { threadId, graphId },
        `Timer not armed: the thread runs graph '${graphId}', which this server does not serve`,
      );
      return;
    }
    const delay = Math.min(Math.max(0, wake.at - Date.now()), MAX_DELAY_MS);
    const handle = setTimeout(() => void this.#fire(threadId, checkpoint.version), delay);
    handle.unref();
    this.#armed.set(threadId, { version: checkpoint.version, handle });
  }

  /** The served graph that runs the thread; `null` for a graph this server does not serve. */
  #graphOf(checkpoint: ThreadCheckpoint): ServedGraph<CompiledGraph<BaseState>> | null {
    const { graph, graphId, graphs } = this.#ctx;
    return servedGraphOf(checkpoint.values, { graph, id: graphId }, graphs?.byId);
  }

  /** Resumes the thread if it still stands where its timer was armed; else does nothing. */
  async #fire(threadId: string, version: number): Promise<void> {
    this.#armed.delete(threadId);
    if (this.#stopped) return;
    const ctx = this.#ctx;
    try {
      const read = await ctx.checkpointer.getCheckpointAndStops(threadId);
      const { checkpoint } = read;
      const wake = checkpoint?.version === version ? earliestTimer(checkpoint) : null;
      if (!checkpoint || !wake) return; // answered, resumed or deleted meanwhile
      if (wake.at > Date.now()) return void (await this.#consider(threadId));
      const served = this.#graphOf(checkpoint);
      if (!served) return;
      const result = await track(
        ctx,
        invokeAsHost(
          served.graph,
          { resume: null, interruptId: wake.interruptId },
          { threadId, ...(checkpoint.userId === null ? {} : { userId: checkpoint.userId }) },
          { loadedThread: read, graphId: served.id },
        ),
      );
      ctx.logger.info(
        { threadId, interruptId: wake.interruptId, status: result.status },
        "Timer resumed the thread",
      );
    } catch (error) {
      if (isTenxgraphError(error, "STORAGE_CONFLICT_001")) {
        ctx.logger.info({ threadId }, "Timer not used: the thread moved on before it fired");
      } else {
        ctx.logger.warn({ threadId, err: error }, "Timer resume failed");
      }
    }
    // The run may have paused on the next timer (a sleep in a loop, a parallel branch's).
    await this.#consider(threadId).catch((error: unknown) =>
      ctx.logger.warn({ threadId, err: error }, "Timer re-read failed"),
    );
  }
}

/** The pending interrupt with the earliest `resumeAt`, or `null` (a thread not paused on a timer). */
export function earliestTimer(
  checkpoint: ThreadCheckpoint,
): { interruptId: string; at: number } | null {
  if (checkpoint.status !== "interrupted") return null;
  let earliest: { interruptId: string; at: number } | null = null;
  for (const pending of checkpoint.interrupts) {
    if (pending.resumeAt === undefined) continue;
    const at = Date.parse(pending.resumeAt);
    if (!earliest || at < earliest.at) earliest = { interruptId: pending.id, at };
  }
  return earliest;
}
