import { context } from "@opentelemetry/api";
import { GraphRecursionError, RunAbandonedError, errorText } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { withFields, type Logger } from "../events/logger.js";
import type { RunStatus } from "../events/stream-event.js";
import type { TraceScope } from "../events/tracing.js";
import type { BaseState } from "../definition/reducers.js";
import { RunWatch } from "../node/run-watch.js";
import { StepLedger } from "../node/step-ledger.js";
import type { Interrupt } from "../storage/checkpointer.js";
import type { BreakpointPause } from "../storage/checkpoint-record.js";
import { pauseAfter, pauseBefore } from "./breakpoints.js";
import type { AttemptRef } from "../storage/ledger-entry.js";
import type { EmitRunEvent, RunEvent } from "./run-event.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunDependencies } from "./run-dependencies.js";
import type { Progress } from "./run-progress.js";
import type { RunInput, RunResult } from "./run-result.js";
import { AbandonSignal, isStopSignal, StopSignal } from "./stop-signal.js";
import { resolveStart, type RunStart } from "./run-start.js";
import { claimLease, releaseLease } from "./run-lease.js";
import { untouchedThread } from "./thread-snapshot.js";
import { runStep } from "./step.js";
import { StepWriter } from "./step-writer.js";
import { stepLabel, traceRun } from "./run-trace.js";

/**
 * The one run loop behind `invoke` and `stream`: start (load, apply input, claim the thread
 * version), then step until END, an interrupt, a stop or an error, writing durably after each
 * step so a crash replays at most the node that was in flight.
 */
export class Run<S extends BaseState> {
  readonly #deps: RunDependencies<S>;
  readonly #config: ResolvedRunConfig;
  /** Where the run's events go, each with the step it belongs to (see `#emit`). */
  readonly #send: RunEventSink;
  readonly #abort: AbortController;
  readonly #logger: Logger;
  #progress: Progress<S> | null = null;
  /** Ledger writes that ride in this run's step writes (ledger protocol v2). */
  readonly #stepLedger: StepLedger;
  /** Writes the run's steps, from the start write on. */
  #writer: StepWriter<S> | null = null;
  /** The run's span (`invoke_agent`): each step's span is its child. */
  #trace: TraceScope | null = null;

  constructor(
    deps: RunDependencies<S>,
    config: ResolvedRunConfig,
    send: RunEventSink,
    abort: AbortController,
    readonly runId: string,
  ) {
    this.#deps = deps;
    this.#config = config;
    this.#send = send;
    this.#abort = abort;
    this.#logger = withFields(deps.logger, { threadId: config.threadId, runId });
    this.#stepLedger = new StepLedger(deps.checkpointer, config.threadId, this.#logger);
  }

  /** Sends an event, stamped with the step the run stands at (its node's step, during a step). */
  readonly #emit: EmitRunEvent = (event) => this.#send(event, this.#progress?.step ?? null);

  async execute(input: RunInput<S>): Promise<RunResult<S>> {
    const { threadId, traceParent, graphId } = this.#config;
    this.#trace = this.#deps.tracing.startRun(traceParent, threadId, this.runId, graphId);
    return traceRun(this.#trace, () => this.#execute(input));
  }

  async #execute(input: RunInput<S>): Promise<RunResult<S>> {
    const begun = await this.#begin(input);
    if ("status" in begun) return begun;
    const { start } = begun;
    let lease = begun.lease;
    this.#progress = start.progress;
    const trace = this.#trace!;
    if (trace.recording) {
      const mode = start.kind === "finished" ? "continue" : start.mode;
      trace.span.setAttribute("tenxgraph.run.mode", mode);
      // A continued or resumed run follows the run that wrote the thread's last checkpoint.
      if (mode !== "new") trace.linkTo(start.previousTrace, mode);
    }
    this.#emit({
      type: "run_start",
      threadId: this.#config.threadId,
      runId: this.runId,
      mode: start.kind === "finished" ? "continue" : start.mode,
    });
    if (start.kind === "finished") return this.#end("completed", []);
    // Heartbeats this run's claims and polls for stop requests, from the start write on.
    const watch = new RunWatch({
      checkpointer: this.#deps.checkpointer,
      threadId: this.#config.threadId,
      stopRequestsAtStart: start.stopRequestsAtStart,
      intervalMs: this.#deps.stopPollIntervalMs,
      leaseMs: this.#deps.claimStaleAfterMs,
      logger: this.#logger,
      onStopRequested: () => this.#abort.abort(new StopSignal("stop()")),
    });
    const writer = new StepWriter({
      deps: this.#deps,
      config: this.#config,
      runId: this.runId,
      stepLedger: this.#stepLedger,
      watch,
      emit: this.#emit,
      logger: this.#logger,
      startCarriesInput: start.mode !== "continue",
      trace: trace.traceparent,
    });
    this.#writer = writer;
    // Heartbeated like a tool claim, so other executions can tell this run is live.
    if (lease) watch.hold(lease);
    try {
      // The start write records the input (or the resume answer) durably and claims the
      // thread's version: of two executions started from one version, the second fails here,
      // before any node or tool runs.
      await writer.commit(this.#progress!, "running", [], true);
      if (this.#needsLease(start) && !lease) {
        lease = await this.#leaseNewThread(start.lease?.attempt ?? 0);
        watch.hold(lease);
        await writer.commit(this.#progress!, "running", [], true);
      }
      this.#emitValues(this.#progress!);
      return await this.#loop(watch, writer);
    } catch (error) {
      return await this.#finishAbnormally(error);
    } finally {
      await this.#stepLedger.settle();
      watch.dispose();
      // After the terminal write: whoever waits for the lease then finds the thread's end.
      if (lease) await releaseLease(this.#deps, this.#config.threadId, lease, this.#logger);
    }
  }

  /**
   * Everything before the start write: where the run begins, and the run lease when it needs
   * one and the thread exists. Returns the result instead when the run was stopped before it
   * began (nothing is written, not even the input).
   */
  async #begin(
    input: RunInput<S>,
  ): Promise<RunResult<S> | { start: RunStart<S>; lease: AttemptRef | null }> {
    const { threadId } = this.#config;
    try {
      if (this.#abort.signal.aborted) throw this.#abort.signal.reason;
      const start = await resolveStart(this.#deps, this.#config, input, this.#abort.signal);
      // Claimed before the start write, so of this run and a live one only one writes.
      const lease =
        this.#needsLease(start) && start.progress.version > 0
          ? await claimLease(this.#deps, threadId, this.runId, start.lease?.attempt ?? 0)
          : null;
      return { start, lease };
    } catch (caught) {
      const error = this.#abandoned() ?? caught;
      // Stopped while it waited for a live run to end: nothing was written.
      if (isStopSignal(error)) return await this.#notStarted();
      this.#emitError(error);
      throw error;
    }
  }

  /** A run whose steps between terminal points are not durable holds the thread's run lease. */
  #needsLease(start: RunStart<S>): boolean {
    return start.kind === "run" && !this.#config.durableCheckpointEveryStep;
  }

  /**
   * A new thread has no row to hold a lease before its first write, so the lease is claimed
   * right after it, and the caller writes the start once more: a compare-and-swap on this run's
   * own version, so a run that started from the first write meanwhile is noticed (as stale)
   * before any node runs.
   */
  async #leaseNewThread(expectedAttempt: number): Promise<AttemptRef> {
    const { threadId } = this.#config;
    return claimLease(this.#deps, threadId, this.runId, expectedAttempt, {
      committedVersion: this.#progress!.version,
    });
  }

  async #loop(watch: RunWatch, writer: StepWriter<S>): Promise<RunResult<S>> {
    let stepsThisRun = 0;
    while (this.#progress!.currentNode !== null) {
      const progress = this.#progress!;
      const signal = this.#abort.signal;
      if (signal.aborted) throw signal.reason;
      if (this.#draining) throw new StopSignal("drain");
      if (stepsThisRun >= this.#config.recursionLimit) {
        throw new GraphRecursionError(this.#config.threadId, this.#config.recursionLimit);
      }
      const before = pauseBefore(this.#config.breakpoints, progress, progress.breakpoint);
      if (before) return await this.#pause([], before);
      const started = performance.now();
      // The step's span covers its node(s) and its write.
      const span = this.#deps.tracing.startStep(
        this.#trace!.context,
        stepLabel(progress),
        progress.step,
      );
      let stepped: { paused: RunResult<S> } | { nodes: string[] };
      try {
        stepped = await this.#step(progress, signal, watch, writer, span);
      } catch (error) {
        span.fail(error);
        throw error;
      }
      span.end();
      if ("paused" in stepped) return stepped.paused;
      stepsThisRun += 1;
      const elapsed = performance.now() - started;
      for (const node of stepped.nodes) this.#deps.metrics.stepDuration.record(elapsed, { node });
    }
    return this.#end("completed", []);
  }

  /** Runs one step and writes it; an interrupted step pauses the run instead. */
  async #step(
    progress: Progress<S>,
    signal: AbortSignal,
    watch: RunWatch,
    writer: StepWriter<S>,
    span: TraceScope,
  ): Promise<{ paused: RunResult<S> } | { nodes: string[] }> {
    // Nodes run in the step span's context: spans they start (a model call, the app's own)
    // are its children.
    const outcome = await context.with(span.context, () =>
      runStep(this.#deps, {
        progress,
        config: this.#config,
        runId: this.runId,
        signal,
        watch,
        stepLedger: this.#stepLedger,
        emit: this.#emit,
        logger: this.#logger,
        traceContext: span.context,
      }),
    );
    if (outcome.kind === "interrupted") return { paused: await this.#pause(outcome.interrupts) };
    const next: Progress<S> = {
      ...progress,
      state: outcome.state,
      ...outcome.next,
      handoff: outcome.handoff,
      step: progress.step + 1,
      resumeAnswers: {},
      // A fan-out step's version names every node it ran, in task order.
      node: outcome.updates.map((update) => update.node).join(", "),
    };
    const done = next.currentNode === null;
    // A breakpoint after the step's nodes pauses in the step's own write, with its ledger
    // writes: the tool calls it made are recorded before the thread says it paused.
    const nodes = outcome.updates.map((update) => update.node);
    const after = done ? null : pauseAfter(this.#config.breakpoints, nodes, next.step);
    if (after) next.breakpoint = after;
    const durable = done || after !== null || this.#config.durableCheckpointEveryStep;
    // The run moves on only once the step is written: if the write fails, the thread stays
    // at this node (as after a crash) and a continuation replays it from the ledger.
    // A draining run stops before the next node: claims for it would only be handed back.
    const claims = durable && !done && !after && !this.#draining ? writer.claimsAhead(next) : [];
    const status = done ? "completed" : after ? "interrupted" : "running";
    // The step's messages and updates are announced once it is written, before its state
    // event: one write for the whole step, however many tasks it ran.
    await writer.commit(next, status, [], durable, claims, () => {
      for (const { node, update, messages } of outcome.updates) {
        for (const message of messages) this.#emit({ type: "message", node, message });
        this.#emit({ type: "update", node, update });
      }
    });
    if (span.recording) {
      // Durable: written to the store; otherwise cached until the run's next durable write.
      span.span.setAttributes({
        "tenxgraph.step.version": next.version,
        "tenxgraph.step.durable": durable,
      });
    }
    this.#emitValues(next);
    this.#progress = next;
    return after ? { paused: this.#end("interrupted", []) } : { nodes };
  }

  /** The state a write has just taken, for the `values` stream mode. */
  #emitValues(progress: Progress<S>): void {
    this.#emit({ type: "values", version: progress.version, state: progress.state });
  }

  /** Pauses for answers to `interrupts`, or (none) at the static breakpoint `at`. */
  async #pause(interrupts: Interrupt[], at?: BreakpointPause): Promise<RunResult<S>> {
    if (at) this.#progress!.breakpoint = at;
    await this.#writer!.commit(this.#progress!, "interrupted", interrupts, true);
    if (interrupts.length > 0) this.#emit({ type: "interrupt", interrupts });
    return this.#end("interrupted", interrupts);
  }

  /** `config.drainSignal` fired: the run ends at the next node boundary. */
  get #draining(): boolean {
    return this.#config.drainSignal?.aborted === true;
  }

  /** The abandon signal, whatever error the abort surfaced as inside the node. */
  #abandoned(): RunAbandonedError | null {
    const reason: unknown = this.#abort.signal.reason;
    if (!(reason instanceof AbandonSignal)) return null;
    this.#logger.info(
      { reason: reason.reason, node: this.#progress?.currentNode },
      "Run abandoned: another execution owns the thread now; nothing more is written",
    );
    return new RunAbandonedError(this.#config.threadId, reason.reason);
  }

  async #finishAbnormally(failure: unknown): Promise<RunResult<S>> {
    const abandoned = this.#abandoned();
    if (abandoned) {
      this.#emitError(abandoned);
      throw abandoned;
    }
    let error = failure;
    if (isStopSignal(error)) {
      try {
        return await this.#finishStopped(error);
      } catch (writeError) {
        error = writeError; // the stopped state could not be written: a failure like any other
      }
    }
    if (isTenxgraphError(error, "STORAGE_CONFLICT_001")) {
      this.#deps.metrics.storageConflicts.add(1);
    } else if (isTenxgraphError(error, "THREAD_004")) {
      // Another live run took the thread over; recording a failure would overwrite its start.
    } else {
      await this.#recordFailure(error);
    }
    this.#emitError(error);
    throw error;
  }

  #emitError(error: unknown): void {
    this.#emit({
      type: "error",
      code: isTenxgraphError(error) ? error.code : null,
      message: errorText(error),
    });
  }

  /** The result of a run stopped before it began: the thread as it is, untouched. */
  async #notStarted(): Promise<RunResult<S>> {
    const result = await untouchedThread(this.#deps, this.#config.threadId, this.runId);
    this.#emit({ type: "run_end", status: "stopped", version: result.version });
    return result;
  }

  async #finishStopped(signal: StopSignal): Promise<RunResult<S>> {
    await this.#writer!.commit(this.#progress!, "stopped", [], true);
    this.#deps.metrics.runStops.add(1);
    this.#logger.info({ source: signal.source, node: this.#progress?.currentNode }, "Run stopped");
    return this.#end("stopped", []);
  }

  /** Best effort: the run failed, so the thread says so; `invoke(null)` continues it later. */
  async #recordFailure(error: unknown): Promise<void> {
    this.#logger.error(
      { err: error, node: this.#progress?.currentNode },
      "Run failed; invoke(null, { threadId }) continues it from its current node",
    );
    try {
      await this.#writer!.commit(this.#progress!, "failed", [], true);
    } catch (writeError) {
      this.#logger.error({ err: writeError }, "Could not record the failed status of the run");
    }
  }

  #end(status: RunStatus, interrupts: Interrupt[]): RunResult<S> {
    const progress = this.#progress!;
    this.#emit({ type: "run_end", status, version: progress.version });
    return {
      status,
      state: progress.state,
      interrupts,
      threadId: this.#config.threadId,
      runId: this.runId,
      version: progress.version,
      step: progress.step,
      currentNode: progress.currentNode,
    };
  }
}

/** Receives each event of a run with the step it belongs to (`null` before the run started). */
export type RunEventSink = (event: RunEvent, step: number | null) => void;
