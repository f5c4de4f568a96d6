import { jsonLogger, type BaseState, type CompiledGraph, type Logger } from "@tenxgraph/core";
import { continuationRefusal, withFields } from "@tenxgraph/core/host";
import {
  Logger as QueueLogger,
  run as runQueue,
  type JobHelpers,
  type Runner,
} from "graphile-worker";
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { runAttempt, type AttemptControls, type AttemptEnd } from "./run-attempt.js";
import { EVENT_BATCH_MS } from "./run-event-pump.js";
import { QueueCollectionAfterJobs } from "./run-queue-collection.js";
import { RUN_TASK, type PgRunStore } from "./run-store.js";
import type { RunJobPayload } from "./run-db.js";
import type { AttemptRef, RunRecord } from "./run-record.js";
import type { CheckpointRead, ThreadCheckpoint } from "@tenxgraph/core/storage";
import { fireTimer, queueTimer, TIMER_TASK } from "./run-timers.js";
import { checkTimings } from "./run-worker-settings.js";

/**
 * Every this many heartbeats (5 s by default) a worker deletes the threads' idle queues: each
 * job pick-up locks every idle queue (see `collectIdleQueues`). The queues of the jobs it
 * completes it collects sooner (`QueueCollectionAfterJobs`); this collects the rest. It also
 * unlocks the queues a takeover's end left locked (see `unlockStrandedQueues`).
 */
const QUEUE_COLLECTION_BEATS = 5;

/** The end of a run naming a graph this worker does not serve: it fails, writing nothing. */
function unknownGraph(graphId: string): AttemptEnd {
  const message = `This worker does not serve graph '${graphId}': start it with the API's config`;
  return {
    outcome: { kind: "final", status: "failed", error: { code: "UNKNOWN_GRAPH", message } },
    events: [],
  };
}

/** Settings of {@link RunWorker}; the timings trade takeover time for load (README, "Many workers"). */
export interface RunWorkerOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  graph: CompiledGraph<any>;
  /** Every graph the server serves, by id, for runs that name one (`RunRequest.graphId`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  graphs?: ReadonlyMap<string, CompiledGraph<any>>;
  store: PgRunStore;
  /** `graph`'s id in the project, in its runs' spans (`invoke_agent <graphId>`; default `agent`). */
  graphId?: string;
  /** Runs at once on this worker (default 1). */
  concurrency?: number;
  /** How often the worker renews its runs and sweeps for dead workers' runs (default 1000 ms). */
  heartbeatMs?: number;
  /**
   * A run whose heartbeat is older than this is taken over by another worker (default 3000 ms).
   * At least twice `heartbeatMs`, so one late beat does not move a live run.
   */
  staleAfterMs?: number;
  /** How often an idle worker looks for jobs it was not notified of (default 500 ms). */
  pollIntervalMs?: number;
  /**
   * How long a run's event waits for the ones after it before they are appended together
   * (default 10 ms; 0 appends at once): each append is a commit and a NOTIFY, and a run that
   * ends within the window writes its events with its end. Streams see events this much later.
   */
  eventBatchMs?: number;
  /** Default `host:pid`; unique per process. */
  workerId?: string;
  logger?: Logger;
}

interface ActiveAttempt {
  ref: AttemptRef;
  controls: AttemptControls;
}

/**
 * Takes background runs from the queue (graphile-worker on PostgreSQL) and runs them on the
 * graph: heartbeats the runs it holds, stops those asked to stop, gives up those another
 * worker took over, and hands dead workers' runs back to the queue. `drain()` (SIGTERM) stops
 * taking runs and hands the running ones back at their next node boundary.
 */
export class RunWorker {
  readonly workerId: string;
  readonly #graph: CompiledGraph<BaseState>;
  readonly #graphId: string;
  readonly #graphs: ReadonlyMap<string, CompiledGraph<BaseState>>;
  readonly #store: PgRunStore;
  readonly #options: Required<
    Pick<
      RunWorkerOptions,
      "concurrency" | "heartbeatMs" | "staleAfterMs" | "pollIntervalMs" | "eventBatchMs"
    >
  >;
  readonly #logger: Logger;
  readonly #attempts = new Map<string, ActiveAttempt>();
  #runner: Runner | null = null;
  #collection: QueueCollectionAfterJobs | null = null;
  #timer: NodeJS.Timeout | null = null;
  #beat: { startedAt: number } | null = null;
  #lastBeatOkAt = Date.now();
  #draining = false;
  #beatsSinceCollection = 0;
  /** The flag of the jobs this worker's graph declined, which it skips (`forbiddenFlags`). */
  readonly #declinedFlag: string;

  constructor(options: RunWorkerOptions) {
    this.#graph = options.graph as CompiledGraph<BaseState>;
    this.#graphId = options.graphId ?? "agent";
    this.#graphs = (options.graphs ?? new Map()) as ReadonlyMap<string, CompiledGraph<BaseState>>;
    this.#store = options.store;
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}`;
    this.#options = {
      concurrency: options.concurrency ?? 1,
      heartbeatMs: options.heartbeatMs ?? 1000,
      staleAfterMs: options.staleAfterMs ?? 3000,
      pollIntervalMs: options.pollIntervalMs ?? 500,
      eventBatchMs: options.eventBatchMs ?? EVENT_BATCH_MS,
    };
    checkTimings(this.#options);
    this.#declinedFlag = declinedFlag(this.#graph);
    this.#logger = withFields(options.logger ?? jsonLogger(), { workerId: this.workerId });
  }

  /** Runs held now. */
  get activeRuns(): string[] {
    return [...this.#attempts.keys()];
  }

  async start(): Promise<void> {
    await this.#store.setup();
    this.#collection = new QueueCollectionAfterJobs(
      (queueIds) => this.#store.collectIdleQueues(queueIds),
      (error) => this.#logger.debug({ err: error }, "Collecting completed jobs' queues failed"),
    );
    this.#runner = await runQueue({
      pgPool: this.#store.pool,
      concurrency: this.#options.concurrency,
      pollInterval: this.#options.pollIntervalMs,
      noHandleSignals: true,
      logger: queueLogger(this.#logger),
      forbiddenFlags: [this.#declinedFlag],
      events: this.#collection.events,
      taskList: {
        [RUN_TASK]: (payload, helpers) => this.#handle(payload, helpers),
        [TIMER_TASK]: (payload) => fireTimer(this.#store, this.#graph, payload, this.#logger),
      },
    });
    this.#timer = setInterval(() => this.#tick(), this.#options.heartbeatMs);
    this.#timer.unref();
    this.#logger.info({ concurrency: this.#options.concurrency }, "Run worker started");
  }

  /**
   * Stops taking runs; each running one stops at its next node boundary (its tools finish and
   * are recorded, so none is left in doubt) and goes back to the queue for another worker.
   * Resolves once every run has been handed back.
   */
  async drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    this.#logger.info({ runs: this.activeRuns }, "Draining: handing running runs back");
    for (const { controls } of this.#attempts.values()) controls.drain.abort();
    await this.#runner?.stop();
    this.#collection?.stop();
    this.#stopTimer();
  }

  async #handle(payload: unknown, helpers: JobHelpers): Promise<void> {
    const job = payload as Partial<Record<keyof RunJobPayload, unknown>> | null;
    const runId = job?.runId;
    if (typeof runId !== "string") {
      this.#logger.error({ payload }, "Ignoring a run job without a runId");
      return;
    }
    const threadId =
      typeof job?.threadId === "string" ? job.threadId : await this.#pendingThread(runId);
    // Not pending (a job queued by an older version, whose run is read): nothing to run.
    if (threadId === null) return;
    // One read of the thread, for the check below and for the run (see `sharedRead`).
    const read = await this.#graph.checkpointer.getCheckpointAndStops(threadId);
    if (await this.#declined(runId, threadId, read.checkpoint)) return;
    const { id, locked_by: lockedBy } = helpers.job;
    const run = await this.#store.beginAttempt(
      runId,
      this.workerId,
      lockedBy ? { id, lockedBy } : null,
      async (threadId) => (await this.#graph.checkpointer.getCheckpoint(threadId))?.version ?? 0,
    );
    // Not pending: it ended, was cancelled, or another worker holds it (a duplicate job).
    if (!run) return;
    const ref: AttemptRef = { runId, attempt: run.attempts, workerId: this.workerId };
    const controls: AttemptControls = {
      stop: new AbortController(),
      stopReason: null,
      drain: new AbortController(),
      abandon: new AbortController(),
    };
    // Taken during a drain: straight back to the queue, no node run.
    if (this.#draining) controls.drain.abort();
    this.#attempts.set(runId, { ref, controls });
    const logger = withFields(this.#logger, {
      runId,
      threadId: run.threadId,
      attempt: run.attempts,
    });
    logger.info({}, "Run attempt started");
    try {
      const graph = run.request.graphId ? this.#graphs.get(run.request.graphId) : this.#graph;
      const id = run.request.graphId ?? this.#graphId;
      const end = graph
        ? await runAttempt({ graph, id }, this.#store, run, ref, controls, logger, {
            read: sharedRead(graph, this.#graph, run, read),
            eventBatchMs: this.#options.eventBatchMs,
          })
        : unknownGraph(run.request.graphId!);
      if (end === null) {
        logger.warn({}, "Run lost to another worker; stopped without writing");
        return;
      }
      const { outcome, events } = end;
      // Before the end is written: a worker dying in between leaves the run to a takeover,
      // which ends it paused again and queues the same timer (one job per thread version).
      if (outcome.kind === "final" && outcome.status === "interrupted" && graph)
        await queueTimer(this.#store, graph, run.threadId);
      const finished = await this.#store.finishAttempt(ref, outcome, events);
      if (!finished)
        logger.warn({ outcome }, "Run lost to another worker before its end was written");
      else logger.info({ outcome }, "Run attempt ended");
      // Only once its end is written: a takeover before that must still find the thread.
      if (finished && outcome.kind === "final" && run.request.deleteThreadAfter)
        await this.#graph.deleteThread({ threadId: run.threadId }).catch((error: unknown) => {
          logger.warn({ err: error }, "A stateless run's thread was not deleted");
        });
    } finally {
      this.#attempts.delete(runId);
    }
  }

  /**
   * During a rolling deploy workers of two versions of the graph share the queue: a run whose
   * thread this worker's graph cannot continue (written by another version, with a node or
   * tool this one lacks and no migration that carries it) goes back to the queue without an
   * attempt, flagged so this version's workers skip it, for a worker that can continue it.
   */
  async #declined(
    runId: string,
    threadId: string,
    read: ThreadCheckpoint | null,
  ): Promise<boolean> {
    const refusal = await continuationRefusal(this.#graph, threadId, read);
    if (!refusal) return false;
    this.#logger.warn(
      { runId, threadId, reason: refusal.message },
      "Declined a run this graph version cannot continue: back to the queue for another version",
    );
    // Queued again only if still pending: an ended run, or one another worker holds, is not.
    await this.#store.declineRun(runId, this.#declinedFlag);
    return true;
  }

  /** The thread of a job that does not name it (queued by an older version), if the run is pending. */
  async #pendingThread(runId: string): Promise<string | null> {
    const run = await this.#store.getRun(runId);
    return run?.status === "pending" ? run.threadId : null;
  }

  /**
   * One heartbeat: renew the runs held, act on stops asked for them, give up those taken over,
   * then hand back the runs of workers that stopped beating. A beat still in flight after the
   * stale window means this worker may be cut off: it gives its runs up itself, before another
   * worker takes them, so a cut-off worker stops instead of racing the new owner.
   */
  #tick(): void {
    if (this.#beat) {
      const late = Date.now() - this.#lastBeatOkAt;
      if (late > this.#options.staleAfterMs - this.#options.heartbeatMs) {
        this.#abandonAll(`no heartbeat answered for ${late} ms`);
      }
      return;
    }
    this.#beat = { startedAt: Date.now() };
    void this.#heartbeat().finally(() => (this.#beat = null));
  }

  async #heartbeat(): Promise<void> {
    const attempts = [...this.#attempts.values()];
    try {
      const { held } = await this.#store.heartbeat(
        this.workerId,
        attempts.map((a) => a.ref),
      );
      this.#lastBeatOkAt = this.#beat?.startedAt ?? Date.now();
      for (const { ref, controls } of attempts) {
        if (!held.has(ref.runId)) {
          if (this.#attempts.get(ref.runId)?.ref === ref) {
            controls.abandon.abort(new Error("another worker took the run over"));
          }
          continue;
        }
        const reason = held.get(ref.runId);
        if (reason && !controls.stop.signal.aborted) {
          controls.stopReason = reason;
          controls.stop.abort();
        }
      }
    } catch (error) {
      this.#logger.warn({ err: error }, "Heartbeat failed");
      const late = Date.now() - this.#lastBeatOkAt;
      if (late > this.#options.staleAfterMs - this.#options.heartbeatMs) {
        this.#abandonAll(`no heartbeat answered for ${late} ms`);
      }
      return;
    }
    if (this.#draining) return;
    try {
      const handedBack = await this.#store.sweepStale(this.#options.staleAfterMs);
      if (handedBack.length > 0) {
        this.#logger.warn({ runs: handedBack }, "Handed runs of a dead worker back to the queue");
      }
    } catch (error) {
      this.#logger.warn({ err: error }, "Sweep for dead workers' runs failed");
    }
    if (++this.#beatsSinceCollection < QUEUE_COLLECTION_BEATS) return;
    this.#beatsSinceCollection = 0;
    try {
      const unlocked = await this.#store.unlockStrandedQueues(this.#options.staleAfterMs);
      if (unlocked.length > 0) {
        this.#logger.warn({ queues: unlocked }, "Unlocked thread queues an ended run left locked");
      }
      const collected = await this.#store.collectIdleQueues();
      this.#logger.debug({ queues: collected }, "Collected the idle queues of threads");
    } catch (error) {
      this.#logger.warn({ err: error }, "Upkeep of the threads' queues failed");
    }
  }

  #abandonAll(why: string): void {
    const given: string[] = [];
    for (const [runId, { controls }] of this.#attempts) {
      if (controls.abandon.signal.aborted) continue;
      controls.abandon.abort(new Error(why));
      given.push(runId);
    }
    // Said once per run, when given up: a cut-off worker may say nothing else until it is back.
    if (given.length > 0) {
      this.#logger.warn(
        { runs: given, reason: why },
        "Cut off from the run store: gave runs up, for another worker to take over",
      );
    }
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

/**
 * The flag of the jobs that workers like this one declined: the same in every worker whose graph
 * has this version and these migrations (which decide what it can continue), and only there.
 */
function declinedFlag(graph: CompiledGraph<BaseState>): string {
  const { version, migrations } = graph.definition;
  const carried = [...migrations.byFrom.values()].map(({ from, nodes, tools }) => ({
    from,
    nodes,
    tools,
  }));
  const identity = JSON.stringify([version.fingerprint, version.version ?? null, carried]);
  const digest = createHash("sha256").update(identity).digest("hex");
  return `tenxgraph:declined:${digest.slice(0, 16)}`;
}

/**
 * The thread as read before the attempt began, for the run to start from, when it may: read
 * from the store the run's graph writes to, on the run's first attempt. Before the attempt
 * holds the run its thread is only written by what could write it after the read as well (an
 * edit, a lost worker of an earlier run), which the checkpoint's version fences either way:
 * the run's first write is stale, not lost. A later attempt reads the thread again once it
 * holds the run, as its input does (`attemptInput`), since its lost predecessor may still
 * have been writing. `undefined`: read it again.
 */
function sharedRead(
  graph: CompiledGraph<BaseState>,
  checked: CompiledGraph<BaseState>,
  run: RunRecord,
  read: CheckpointRead,
): CheckpointRead | undefined {
  return run.attempts === 1 && graph.checkpointer === checked.checkpointer ? read : undefined;
}

/** graphile-worker's own log lines, at their level, through the worker's logger. */
function queueLogger(logger: Logger): QueueLogger {
  return new QueueLogger(() => (level, message, meta) => {
    if (level === "error") logger.error({ queue: meta }, message);
    else if (level === "warning") logger.warn({ queue: meta }, message);
  });
}
