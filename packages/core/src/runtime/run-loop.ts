import { StaleStateError, GraphRecursionError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { withFields, type Logger } from "../events/logger.js";
import type { RuntimeMetrics } from "../events/metrics.js";
import type { EmitEvent } from "../events/stream-event.js";
import type { BaseState } from "../graph/reducers.js";
import type { GraphDefinition } from "../graph/graph-definition.js";
import type { IdGenerator } from "../messages/ids.js";
import type { Checkpointer, ThreadStatus } from "../storage/checkpointer.js";
import { FAULT_POINTS, type FaultInjector } from "./fault-points.js";
import { isInterruptSignal, type Interrupt } from "./interrupt.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunInput, RunResult } from "./run-result.js";
import { isStopSignal, RunWatch, StopSignal } from "./stop.js";
import { resolveStart } from "./run-start.js";
import { runStep } from "./step.js";

/** What a run needs from the compiled graph. */
export interface RunDependencies<S extends BaseState> {
  graph: GraphDefinition<S>;
  checkpointer: Checkpointer;
  logger: Logger;
  metrics: RuntimeMetrics;
  ids: IdGenerator;
  faultPoints: FaultInjector | undefined;
  stopPollIntervalMs: number;
  claimStaleAfterMs: number;
  isEndedLocalRun(runId: string): boolean;
}

/** The thread as this run holds it between steps. */
export interface Progress<S extends BaseState> {
  version: number;
  step: number;
  currentNode: string | null;
  state: S;
  /** How many messages of `state.messages` the store already has. */
  persisted: number;
  resumeAnswers: Record<string, unknown>;
  userId: string | null;
}

/**
 * The one run loop behind `invoke` and `stream`: start (load, apply input, claim the thread
 * version), then step until END, an interrupt, a stop or an error, writing durably after each
 * step so a crash replays at most the node that was in flight.
 */
export class Run<S extends BaseState> {
  readonly #deps: RunDependencies<S>;
  readonly #config: ResolvedRunConfig;
  readonly #emit: EmitEvent;
  readonly #abort: AbortController;
  readonly #logger: Logger;
  #progress: Progress<S> | null = null;

  constructor(
    deps: RunDependencies<S>,
    config: ResolvedRunConfig,
    emit: EmitEvent,
    abort: AbortController,
    readonly runId: string,
  ) {
    this.#deps = deps;
    this.#config = config;
    this.#emit = emit;
    this.#abort = abort;
    this.#logger = withFields(deps.logger, { threadId: config.threadId, runId });
  }

  async execute(input: RunInput<S>): Promise<RunResult<S>> {
    const start = await resolveStart(this.#deps, this.#config, input);
    if (start.kind === "finished") return this.#result("completed", start.progress, []);
    this.#progress = start.progress;
    this.#emit({
      type: "run_start",
      threadId: this.#config.threadId,
      runId: this.runId,
      mode: start.mode,
    });
    const watch = new RunWatch({
      checkpointer: this.#deps.checkpointer,
      threadId: this.#config.threadId,
      intervalMs: this.#deps.stopPollIntervalMs,
      logger: this.#logger,
      onStopRequested: () => this.#abort.abort(new StopSignal("stop()")),
    });
    try {
      await this.#deps.checkpointer.clearStop(this.#config.threadId);
      // The start write records the input (or the resume answer) durably and claims the
      // thread's version: of two executions started from one version, the second fails here,
      // before any node or tool runs.
      await this.#commit("running", [], true);
      return await this.#loop(watch);
    } catch (error) {
      return await this.#finishAbnormally(error);
    } finally {
      watch.dispose();
    }
  }

  async #loop(watch: RunWatch): Promise<RunResult<S>> {
    const progress = this.#progress!;
    let stepsThisRun = 0;
    while (progress.currentNode !== null) {
      const signal = this.#abort.signal;
      if (signal.aborted) throw signal.reason;
      if (stepsThisRun >= this.#config.recursionLimit) {
        throw new GraphRecursionError(this.#config.threadId, this.#config.recursionLimit);
      }
      const started = performance.now();
      const outcome = await runStep(this.#deps, {
        progress,
        config: this.#config,
        runId: this.runId,
        signal,
        watch,
        emit: this.#emit,
        logger: this.#logger,
      });
      if (outcome.kind === "interrupted") return this.#pause(outcome.interrupts);
      const firstNew = progress.state.messages.length;
      progress.state = outcome.state;
      progress.currentNode = outcome.next;
      progress.step += 1;
      progress.resumeAnswers = {};
      stepsThisRun += 1;
      const done = progress.currentNode === null;
      await this.#commit(
        done ? "completed" : "running",
        [],
        done || this.#config.durableCheckpointEveryStep,
      );
      for (const message of progress.state.messages.slice(firstNew)) {
        this.#emit({ type: "message", node: outcome.node, message });
      }
      this.#deps.metrics.stepDuration.record(performance.now() - started, { node: outcome.node });
    }
    return this.#end("completed", []);
  }

  async #pause(interrupts: Interrupt[]): Promise<RunResult<S>> {
    await this.#commit("interrupted", interrupts, true);
    this.#emit({ type: "interrupt", interrupts });
    return this.#end("interrupted", interrupts);
  }

  async #finishAbnormally(error: unknown): Promise<RunResult<S>> {
    if (isStopSignal(error)) {
      this.#deps.metrics.runStops.add(1);
      await this.#commit("stopped", [], true);
      await this.#deps.checkpointer.clearStop(this.#config.threadId);
      this.#logger.info({ source: error.source, node: this.#progress?.currentNode }, "Run stopped");
      return this.#end("stopped", []);
    }
    if (isInterruptSignal(error)) return this.#pause(error.interrupts);
    if (error instanceof StaleStateError) {
      this.#deps.metrics.storageConflicts.add(1);
    } else {
      await this.#recordFailure(error);
    }
    this.#emit({
      type: "error",
      code: isTenxgraphError(error) ? error.code : null,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  }

  /** Best effort: the run failed, so the thread says so; `invoke(null)` continues it later. */
  async #recordFailure(error: unknown): Promise<void> {
    this.#logger.error(
      { err: error, node: this.#progress?.currentNode },
      "Run failed; invoke(null, { threadId }) continues it from its current node",
    );
    try {
      await this.#commit("failed", [], true);
    } catch (writeError) {
      this.#logger.error({ err: writeError }, "Could not record the failed status of the run");
    }
  }

  #end(status: "completed" | "interrupted" | "stopped", interrupts: Interrupt[]): RunResult<S> {
    const progress = this.#progress!;
    this.#emit({ type: "run_end", status, version: progress.version });
    return this.#result(status, progress, interrupts);
  }

  #result(
    status: "completed" | "interrupted" | "stopped",
    progress: Progress<S>,
    interrupts: Interrupt[],
  ): RunResult<S> {
    return {
      status,
      state: progress.state,
      interrupts,
      threadId: this.#config.threadId,
      runId: this.runId,
      version: progress.version,
    };
  }

  /**
   * One versioned write: the checkpoint plus the messages the store does not have yet, as a
   * compare-and-swap on the version this run last wrote or read. Non-durable steps are skipped;
   * the next durable write carries everything since.
   */
  async #commit(status: ThreadStatus, interrupts: Interrupt[], durable: boolean): Promise<void> {
    if (!durable) return;
    const progress = this.#progress!;
    const { messages, ...values } = progress.state;
    const context = {
      threadId: this.#config.threadId,
      runId: this.runId,
      node: progress.currentNode ?? "END",
    };
    await this.#deps.faultPoints?.hit(FAULT_POINTS.STEP_BEFORE_WRITE, context);
    progress.version = await this.#deps.checkpointer.putCheckpoint({
      threadId: this.#config.threadId,
      userId: progress.userId,
      expectedVersion: progress.version,
      step: progress.step,
      currentNode: progress.currentNode,
      status,
      values,
      interrupts,
      resumeAnswers: progress.resumeAnswers,
      newMessages: messages.slice(progress.persisted),
    });
    progress.persisted = messages.length;
    this.#emit({
      type: "state",
      version: progress.version,
      step: progress.step,
      currentNode: progress.currentNode,
      status,
    });
    await this.#deps.faultPoints?.hit(FAULT_POINTS.STEP_AFTER_WRITE, context);
  }
}
