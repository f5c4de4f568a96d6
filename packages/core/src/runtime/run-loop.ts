import {
  StaleStateError,
  GraphRecursionError,
  RunAbandonedError,
  errorText,
} from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { withFields, type Logger } from "../events/logger.js";
import type { EmitRunEvent, RunEvent } from "./run-event.js";
import type { RunStatus } from "../events/stream-event.js";
import type { BaseState } from "../graph/reducers.js";
import type { AttemptRef } from "../storage/ledger-entry.js";
import type {
  CheckpointWrite,
  Interrupt,
  StepCommit,
  StepWrite,
  ThreadStatus,
} from "../storage/checkpointer.js";
import type { LedgerClaim } from "../storage/ledger-entry.js";
import { isGraphNode } from "../graph/graph-node.js";
import { FAULT_POINTS } from "./fault-points.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunDependencies } from "./run-dependencies.js";
import type { Progress } from "./run-progress.js";
import type { RunInput, RunResult } from "./run-result.js";
import { RunWatch } from "./run-watch.js";
import { AbandonSignal, isStopSignal, StopSignal } from "./stop-signal.js";
import { resolveStart, type RunStart } from "./run-start.js";
import { claimLease, releaseLease } from "./run-lease.js";
import { loadThread } from "./thread-snapshot.js";
import { runStep } from "./step.js";
import { StepLedger } from "./step-ledger.js";
import { diffTranscript } from "./transcript-change.js";
import { stepTasks } from "./step-tasks.js";
import { inNamespace } from "./node-context.js";

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
  /** Heartbeats this run's claims and polls for stop requests, from the start write on. */
  #watch: RunWatch | null = null;
  /** What this run committed, for a `StaleStateError` that ends it (see `#stale`). */
  readonly #committed = { versions: [] as number[], messageIds: [] as string[], input: false };
  /** Whether the start write carries input (a new turn's update or a resume answer). */
  #startCarriesInput = false;

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
    const begun = await this.#begin(input);
    if ("status" in begun) return begun;
    const { start, stopRequestsAtStart } = begun;
    let lease = begun.lease;
    this.#progress = start.progress;
    this.#startCarriesInput = start.kind === "run" && start.mode !== "continue";
    this.#emit({
      type: "run_start",
      threadId: this.#config.threadId,
      runId: this.runId,
      mode: start.kind === "finished" ? "continue" : start.mode,
    });
    if (start.kind === "finished") return this.#end("completed", []);
    const watch = new RunWatch({
      checkpointer: this.#deps.checkpointer,
      threadId: this.#config.threadId,
      stopRequestsAtStart,
      intervalMs: this.#deps.stopPollIntervalMs,
      leaseMs: this.#deps.claimStaleAfterMs,
      logger: this.#logger,
      onStopRequested: () => this.#abort.abort(new StopSignal("stop()")),
    });
    this.#watch = watch;
    // Heartbeated like a tool claim, so other executions can tell this run is live.
    if (lease) watch.hold(lease);
    try {
      // The start write records the input (or the resume answer) durably and claims the
      // thread's version: of two executions started from one version, the second fails here,
      // before any node or tool runs.
      await this.#commit(this.#progress!, "running", [], true);
      if (this.#needsLease(start) && !lease) {
        lease = await this.#leaseNewThread(start.lease?.attempt ?? 0);
        watch.hold(lease);
        await this.#commit(this.#progress!, "running", [], true);
      }
      this.#emitValues(this.#progress!);
      return await this.#loop(watch);
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
  ): Promise<
    RunResult<S> | { start: RunStart<S>; stopRequestsAtStart: number; lease: AttemptRef | null }
  > {
    const { threadId } = this.#config;
    try {
      // Stop requests are counted, never cleared: those made from now on are for this run.
      const stopRequestsAtStart = await this.#deps.checkpointer.countStopRequests(threadId);
      if (this.#abort.signal.aborted) throw this.#abort.signal.reason;
      const start = await resolveStart(this.#deps, this.#config, input, this.#abort.signal);
      // Claimed before the start write, so of this run and a live one only one writes.
      const lease =
        this.#needsLease(start) && start.progress.version > 0
          ? await claimLease(this.#deps, threadId, this.runId, start.lease?.attempt ?? 0)
          : null;
      return { start, stopRequestsAtStart, lease };
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

  async #loop(watch: RunWatch): Promise<RunResult<S>> {
    let stepsThisRun = 0;
    while (this.#progress!.currentNode !== null) {
      const progress = this.#progress!;
      const signal = this.#abort.signal;
      if (signal.aborted) throw signal.reason;
      if (this.#draining) throw new StopSignal("drain");
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
        stepLedger: this.#stepLedger,
        emit: this.#emit,
        logger: this.#logger,
      });
      if (outcome.kind === "interrupted") return this.#pause(outcome.interrupts);
      const next: Progress<S> = {
        ...progress,
        state: outcome.state,
        ...outcome.next,
        step: progress.step + 1,
        resumeAnswers: {},
        // A fan-out step's version names every node it ran, in task order.
        node: outcome.updates.map((update) => update.node).join(", "),
      };
      stepsThisRun += 1;
      const done = next.currentNode === null;
      const durable = done || this.#config.durableCheckpointEveryStep;
      // The run moves on only once the step is written: if the write fails, the thread stays
      // at this node (as after a crash) and a continuation replays it from the ledger.
      const claims = durable && !done ? this.#claimsAhead(next) : [];
      // The step's messages and updates are announced once it is written, before its state
      // event: one write for the whole step, however many tasks it ran.
      await this.#commit(next, done ? "completed" : "running", [], durable, claims, () => {
        for (const { node, update, messages } of outcome.updates) {
          for (const message of messages) this.#emit({ type: "message", node, message });
          this.#emit({ type: "update", node, update });
        }
      });
      this.#emitValues(next);
      this.#progress = next;
      const elapsed = performance.now() - started;
      for (const { node } of outcome.updates) {
        this.#deps.metrics.stepDuration.record(elapsed, { node });
      }
    }
    return this.#end("completed", []);
  }

  /** The state a write has just taken, for the `values` stream mode. */
  #emitValues(progress: Progress<S>): void {
    this.#emit({ type: "values", version: progress.version, state: progress.state });
  }

  /**
   * The claims of the next node's calls that may ride in this step's write: those the node
   * names (`GraphNode.claimsAhead`, the `retry` calls of a tool node). None when the store
   * cannot commit them with the step.
   */
  #claimsAhead(next: Progress<S>): LedgerClaim[] {
    // A draining run stops before the next node: claims for it would only be handed back.
    if (this.#draining || !this.#stepLedger.rides) return [];
    return stepTasks(next).flatMap((task) => {
      const node = this.#deps.graph.nodes.get(task.node);
      if (!node || !isGraphNode(node) || !node.claimsAhead) return [];
      try {
        const state = task.input ? { ...next.state, ...task.input } : next.state;
        // Named in the plain chain's namespace; the task's calls are keyed in its own.
        return node.claimsAhead(state).map(({ key, toolName }) => ({
          key: inNamespace(task.namespace, key),
          toolName,
          ownerRunId: this.runId,
          leaseMs: this.#deps.claimStaleAfterMs,
          expectedAttempt: 0,
        }));
      } catch (error) {
        // Only a saving is lost: the node claims its calls itself when it runs.
        this.#logger.warn({ err: error, node: task.node }, "Could not plan claims ahead");
        return [];
      }
    });
  }

  async #pause(interrupts: Interrupt[]): Promise<RunResult<S>> {
    await this.#commit(this.#progress!, "interrupted", interrupts, true);
    this.#emit({ type: "interrupt", interrupts });
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
    const snapshot = await loadThread(this.#deps.checkpointer, this.#config.threadId);
    const values = snapshot?.checkpoint.values ?? structuredClone(this.#deps.graph.initialState);
    const state = { ...values, messages: snapshot?.messages ?? [] } as unknown as S;
    const version = snapshot?.checkpoint.version ?? 0;
    this.#emit({ type: "run_end", status: "stopped", version });
    return {
      status: "stopped",
      state,
      interrupts: [],
      threadId: this.#config.threadId,
      runId: this.runId,
      version,
      step: snapshot?.checkpoint.step ?? 0,
      currentNode: snapshot?.checkpoint.currentNode ?? null,
    };
  }

  async #finishStopped(signal: StopSignal): Promise<RunResult<S>> {
    await this.#commit(this.#progress!, "stopped", [], true);
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
      await this.#commit(this.#progress!, "failed", [], true);
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

  /**
   * One versioned write: the checkpoint plus the messages the store does not have yet, as a
   * compare-and-swap on the version this run last wrote or read, with the ledger writes that
   * ride in it (results waiting for it, and `claims` of the next node's calls). A non-durable
   * step goes to the store's cache when it has one (and is skipped when it has none); the next
   * durable write carries everything since. Results cannot ride in a cached step, so they are
   * recorded first, as they would have been when their tools returned. `written` runs once the
   * write (or the cache write, or the skip) is done, before the `state` event of a durable one.
   */
  async #commit(
    progress: Progress<S>,
    status: ThreadStatus,
    interrupts: Interrupt[],
    durable: boolean,
    claims: readonly LedgerClaim[] = [],
    written: () => void = () => {},
  ): Promise<void> {
    const { checkpointer } = this.#deps;
    const ledger = this.#stepLedger;
    if (!durable || !ledger.rides) await ledger.recordWaiting();
    if (!durable && !checkpointer.cacheStep) return written();
    const write = this.#checkpointWrite(progress, status, interrupts);
    // A cache that cannot take the step (Redis down) must not lose it: write it durably.
    if (!durable && (await checkpointer.cacheStep!(write))) return written();
    const context = {
      threadId: this.#config.threadId,
      runId: this.runId,
      node: progress.currentNode ?? "END",
    };
    await this.#deps.faultPoints?.hit(FAULT_POINTS.STEP_BEFORE_WRITE, context);
    progress.version = ledger.rides
      ? await ledger.commitWith(claims, this.#watch!, async (writes) => {
          const committed = await this.#put(Object.assign({}, write, { ledger: writes }));
          return { result: committed.version, claims: committed.claims };
        })
      : (await this.#put(write)).version;
    noteDurable(progress, write);
    written();
    this.#emit({
      type: "state",
      version: progress.version,
      step: progress.step,
      currentNode: progress.currentNode,
      status,
    });
    await this.#deps.faultPoints?.hit(FAULT_POINTS.STEP_AFTER_WRITE, context);
  }

  /**
   * One durable write (with its ledger writes, when it has any), noted in what this run
   * committed. A conflict is rethrown with that record, so the caller knows whether its input
   * is already in the thread before it retries.
   */
  async #put(write: CheckpointWrite | StepWrite): Promise<StepCommit> {
    const { checkpointer } = this.#deps;
    let committed: StepCommit;
    try {
      // A write with no ledger writes is a plain checkpoint write, on any store.
      committed =
        "ledger" in write && (write.ledger.completions.length > 0 || write.ledger.claims.length > 0)
          ? await checkpointer.commitStep!(write)
          : { version: await checkpointer.putCheckpoint(stripLedger(write)), claims: [] };
    } catch (error) {
      // By code: the store may have thrown it from another copy of this package.
      if (!isTenxgraphError(error, "STORAGE_CONFLICT_001")) throw error;
      const stale = error as StaleStateError;
      const { versions, messageIds, input } = this.#committed;
      throw new StaleStateError(stale.threadId, stale.expectedVersion, stale.actualVersion, {
        runId: this.runId,
        versions: [...versions],
        inputCommitted: input,
        messageIds: [...messageIds],
      });
    }
    this.#committed.versions.push(committed.version);
    this.#committed.messageIds.push(...write.newMessages.map((message) => message.id));
    this.#committed.input ||= this.#startCarriesInput;
    return committed;
  }

  #checkpointWrite(
    progress: Progress<S>,
    status: ThreadStatus,
    interrupts: Interrupt[],
  ): CheckpointWrite {
    const { messages, ...values } = progress.state;
    return {
      threadId: this.#config.threadId,
      incarnation: progress.incarnation,
      userId: progress.userId,
      expectedVersion: progress.version,
      parentVersion: progress.forkOf ?? progress.version,
      node: progress.node,
      runId: this.runId,
      step: progress.step,
      currentNode: progress.currentNode,
      frontier: progress.frontier,
      status,
      values,
      interrupts,
      resumeAnswers: progress.resumeAnswers,
      // Read by the store on the thread's first write only: a subgraph's thread names its parent.
      parentThreadId: this.#config.parentThreadId,
      ...diffTranscript(progress.durable, messages),
    };
  }
}

/**
 * After a durable write: the store holds the run's transcript, the fork (if any) is made, and
 * the node's output is recorded. An appending write extends what the run knows is stored;
 * an edit or a removal makes it read the transcript afresh.
 */
function noteDurable<S extends BaseState>(progress: Progress<S>, write: CheckpointWrite): void {
  const edited = (write.replacedMessages?.length ?? 0) + (write.removedMessageIds?.length ?? 0) > 0;
  if (edited) {
    progress.durable = progress.state.messages.slice();
    progress.persistedIds = new Set(progress.durable.map((message) => message.id));
  } else {
    progress.durable.push(...write.newMessages);
    for (const message of write.newMessages) progress.persistedIds.add(message.id);
  }
  progress.persisted = progress.durable.length;
  progress.forkOf = null;
  progress.node = null;
}

/** Receives each event of a run with the step it belongs to (`null` before the run started). */
export type RunEventSink = (event: RunEvent, step: number | null) => void;

/** The checkpoint write of a step write, without its (empty) ledger writes. */
function stripLedger(write: CheckpointWrite | StepWrite): CheckpointWrite {
  if (!("ledger" in write)) return write;
  const { ledger: _ledger, ...checkpoint } = write;
  return checkpoint;
}
