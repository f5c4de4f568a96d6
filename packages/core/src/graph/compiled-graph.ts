import { jsonLogger } from "../events/logger.js";
import { RuntimeMetrics } from "../events/metrics.js";
import { RuntimeTracing } from "../events/tracing.js";
import { StreamProjection } from "../runtime/stream-projection.js";
import {
  resolveStreamMode,
  type StreamConfig,
  type StreamModeOption,
  type StreamOutput,
} from "../runtime/stream-mode.js";
import type { LedgerEntry } from "../storage/ledger-entry.js";
import { uuidv7 } from "../messages/ids.js";
import { EventQueue } from "../runtime/event-queue.js";
import { requireId, resolveRunConfig, type RunConfig } from "../runtime/run-config.js";
import { NO_HOST_CONTROLS, type HostControls } from "../runtime/host-controls.js";
import { RUN_LEASE_KEY } from "../runtime/run-lease.js";
import type { RunDependencies } from "../runtime/run-dependencies.js";
import { executeRun } from "../runtime/execute-run.js";
import type { RunEventSink } from "../runtime/run-loop.js";
import type { RunInput, RunResult } from "../runtime/run-result.js";
import { StopSignal } from "../runtime/stop-signal.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import type { Store } from "../store/store.js";
import { MISSING_STORE } from "../store/missing-store.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import type { GraphDefinition } from "../definition/graph-definition.js";
import { readThreadState, type StateHistoryEntry, type ThreadState } from "./thread-state.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";
import {
  updateThreadState,
  writeThreadState,
  type StateWrite,
  type UpdateStateOptions,
} from "../runtime/state-edit.js";
import { InvalidRunError } from "../errors/errors.js";
import { traceIdOf } from "../events/tracing.js";
import { checkTimings, type CompileOptions } from "./compile-options.js";
import { viewGraph, type GraphView } from "./graph-view.js";
import { resolveBreakpoints, type Breakpoints } from "../runtime/breakpoints.js";

const ENDED_RUNS_REMEMBERED = 1000;

/** `invoke` and `stream` with a host's controls: `@tenxgraph/core/host` calls these. */
export interface HostRunEntry {
  invoke<S extends BaseState>(
    graph: CompiledGraph<S>,
    input: RunInput<S>,
    config: RunConfig,
    controls: HostControls,
  ): Promise<RunResult<S>>;
  stream<S extends BaseState, const M extends StreamModeOption>(
    graph: CompiledGraph<S>,
    input: RunInput<S>,
    config: StreamConfig<M>,
    controls: HostControls,
  ): AsyncGenerator<StreamOutput<S, M>>;
}

/** Set once, by `CompiledGraph`'s static block (which may reach its private run). */
export let runAsHost: HostRunEntry;

/** A runnable graph: `invoke`, `stream`, `stop`, and thread inspection. Made by `StateGraph.compile()`. */
export class CompiledGraph<S extends BaseState> {
  readonly #deps: RunDependencies<S>;
  readonly #activeRuns = new Map<string, Set<AbortController>>();
  readonly #endedRuns = new Set<string>();
  /** `compile()`'s `interruptBefore` / `interruptAfter`, checked against the nodes. */
  readonly #breakpoints: Breakpoints;

  static {
    // The host entry's way in: the same run as invoke/stream, with the host's controls beside
    // the config. Not a method, so users of the class never see it.
    runAsHost = {
      invoke: (graph, input, config, controls) =>
        graph.#execute(input, config, controls, () => {}, new AbortController(), "invoke"),
      stream: (graph, input, config, controls) => graph.#stream(input, config, controls),
    };
  }

  constructor(graph: GraphDefinition<S>, options: CompileOptions) {
    const { stopPollIntervalMs = 1000, claimStaleAfterMs = 3000 } = options;
    checkTimings(stopPollIntervalMs, claimStaleAfterMs);
    this.#breakpoints = resolveBreakpoints(options, graph.nodes, "compile()");
    this.#deps = {
      graph,
      checkpointer: options.checkpointer ?? new InMemoryCheckpointer(),
      store: options.store ?? MISSING_STORE,
      logger: options.logger ?? jsonLogger(),
      metrics: new RuntimeMetrics(options.meter),
      tracing: new RuntimeTracing(options.tracing),
      ids: options.ids ?? uuidv7,
      faultPoints: options.faultPoints,
      stopPollIntervalMs,
      claimStaleAfterMs,
      isEndedLocalRun: (runId) => this.#endedRuns.has(runId),
    };
  }

  get checkpointer(): Checkpointer {
    return this.#deps.checkpointer;
  }

  /** The long-term store of `compile({ store })`, or `undefined`: a server serves this one. */
  get store(): Store | undefined {
    return this.#deps.store === MISSING_STORE ? undefined : this.#deps.store;
  }

  /** The graph's static breakpoints, as `compile()` set them (a run's config may replace them). */
  get breakpoints(): Breakpoints {
    return this.#breakpoints;
  }

  /**
   * The graph's nodes and edges, START and END included (conditional edges with their declared
   * destinations), as servers and the inspector draw it; `drawMermaid()` writes a Mermaid
   * flowchart. With `xray: true`, each subgraph node carries its own graph's view.
   *
   * @example
   * console.log(app.getGraph().drawMermaid());
   */
  getGraph({ xray = false }: { xray?: boolean } = {}): GraphView {
    return viewGraph(this.#deps.graph, xray);
  }

  /** The compiled nodes, edges and entry point (read-only), for servers and inspectors. */
  get definition(): GraphDefinition<S> {
    return this.#deps.graph;
  }

  /**
   * Runs the graph on a thread until END, an interrupt or a stop. Rejects with coded errors
   * (`StaleStateError`, `NodeTimeoutError`, `GraphRecursionError`, ...); tool failures are
   * tool messages, never rejections.
   */
  async invoke(input: RunInput<S>, config: RunConfig = {}): Promise<RunResult<S>> {
    return this.#execute(
      input,
      config,
      NO_HOST_CONTROLS,
      () => {},
      new AbortController(),
      "invoke",
    );
  }

  /**
   * The same run as `invoke`, yielding its events (`StreamEvent`), or with `config.streamMode`
   * another projection of them: `"values"` (the state after each write), `"updates"`
   * (`{ [node]: update }`), `"messages"`, `"custom"` (what `ctx.write` sends), `"debug"`; a list
   * of modes yields `[mode, chunk]` tuples. Breaking out of the loop stops the run cleanly: the
   * thread is left `stopped` and `invoke(null, { threadId })` continues it.
   *
   * @example
   * for await (const state of app.stream(input, { threadId, streamMode: "values" })) {
   *   console.log(state.messages.length);
   * }
   */
  stream<const M extends StreamModeOption = "events">(
    input: RunInput<S>,
    config: StreamConfig<M> = {},
  ): AsyncGenerator<StreamOutput<S, M>> {
    return this.#stream(input, config, NO_HOST_CONTROLS);
  }

  /** `stream`, steered by a host's `controls` too (`streamAsHost`). */
  async *#stream<const M extends StreamModeOption>(
    input: RunInput<S>,
    config: StreamConfig<M>,
    controls: HostControls,
  ): AsyncGenerator<StreamOutput<S, M>> {
    const { modes, tuples } = resolveStreamMode(streamModeOf(config));
    const projection = new StreamProjection(modes, tuples);
    const queue = new EventQueue<StreamOutput<S, M>>();
    const abort = new AbortController();
    let finished = false;
    const project: RunEventSink = (event, step) => {
      for (const chunk of projection.project(event, step)) queue.push(chunk as StreamOutput<S, M>);
    };
    const run = this.#execute(input, config, controls, project, abort, "stream").then(
      () => queue.close(),
      (error: unknown) => queue.fail(error),
    );
    try {
      for await (const event of queue) yield event;
      finished = true;
    } finally {
      if (!finished) abort.abort(new StopSignal("stream closed"));
      await run;
    }
  }

  /** Stops the thread's running run, in this process at once, in others within a poll interval. */
  async stop({ threadId }: { threadId: string }): Promise<void> {
    requireId(threadId, "threadId");
    // Local runs first: a store that is down must not keep this process's run going.
    for (const controller of this.#activeRuns.get(threadId) ?? []) {
      controller.abort(new StopSignal("stop()"));
    }
    await this.#deps.checkpointer.requestStop(threadId);
  }

  /**
   * The thread's latest committed state, or with `version` that version's, or `null` when the
   * thread (or that version: never written, or pruned) does not exist. With `subgraphs: true`,
   * also the state of the subgraphs its step runs (see `ThreadState.subgraphs`).
   */
  async getState({
    threadId,
    version,
    subgraphs = false,
  }: {
    threadId: string;
    version?: number;
    subgraphs?: boolean;
  }): Promise<ThreadState<S> | null> {
    requireId(threadId, "threadId");
    if (version !== undefined) requireVersion(version, "version");
    const { checkpointer, graph } = this.#deps;
    return readThreadState(checkpointer, graph, threadId, subgraphs, version);
  }

  /**
   * The thread's versions, newest first, paged (`limit`, and `before` a version), without their
   * transcripts: `[]` for an unknown thread. Versions a fork left behind are listed too; follow
   * `parentVersion` from the latest to walk the current branch.
   */
  async getStateHistory(
    { threadId }: { threadId: string },
    page: { limit?: number; before?: number } = {},
  ): Promise<StateHistoryEntry<S>[]> {
    requireId(threadId, "threadId");
    if (page.limit !== undefined) requireCount(page.limit, "limit");
    if (page.before !== undefined) requireVersion(page.before, "before");
    const versions = await this.#deps.checkpointer.listVersions(threadId, page);
    return versions.map((checkpoint) => ({
      version: checkpoint.version,
      parentVersion: checkpoint.parentVersion,
      step: checkpoint.step,
      node: checkpoint.node,
      nextNode: checkpoint.currentNode,
      status: checkpoint.status,
      runId: checkpoint.runId,
      createdAt: checkpoint.updatedAt,
      values: checkpoint.values as Omit<S, "messages">,
      messageCount: checkpoint.messageCount,
      interrupts: checkpoint.interrupts,
      traceId: traceIdOf(checkpoint.trace),
    }));
  }

  /**
   * Writes `update` as the thread's next version, through the reducers (messages: a new id
   * appends, an existing id replaces, `Message.remove(id)` removes), with the compare-and-swap
   * of a step: `StaleStateError` if a run wrote meanwhile. With `asNode`, as if that node had
   * returned it: the next `invoke(null)` runs the node after it. Returns the new version.
   */
  async updateState(
    { threadId }: { threadId: string },
    update: StateUpdate<S>,
    options: UpdateStateOptions = {},
  ): Promise<number> {
    requireId(threadId, "threadId");
    return updateThreadState(this.#deps, threadId, update, options);
  }

  /**
   * Writes the thread's next version as given, without reducers: `values` replace the state
   * fields, `appendMessages` extend the transcript, `resetPosition` clears where a run stands.
   * Creates the thread, owned by `userId`, when it does not exist. For hosts with merge rules of
   * their own; `updateState` is the reducers' way. Same compare-and-swap; returns the version.
   */
  async writeState(
    { threadId, userId }: { threadId: string; userId?: string | null },
    write: StateWrite,
  ): Promise<number> {
    requireId(threadId, "threadId");
    if (write.expectedVersion !== undefined) requireCount(write.expectedVersion, "expectedVersion");
    if (write.fromVersion !== undefined) requireCount(write.fromVersion, "fromVersion", 1);
    return writeThreadState(this.#deps, threadId, userId ?? null, write);
  }

  /**
   * Deletes all but the newest `keepLast` versions of the thread (the latest is always kept)
   * and the messages only they held. Returns how many versions went. Their tool ledger stays:
   * it is what keeps a recorded call from running again.
   */
  async pruneHistory(
    { threadId }: { threadId: string },
    { keepLast }: { keepLast: number },
  ): Promise<number> {
    requireId(threadId, "threadId");
    requireCount(keepLast, "keepLast", 1);
    return this.#deps.checkpointer.pruneVersions(threadId, { keepLast });
  }

  /**
   * Marks the thread to be deleted after `at` (`null` clears it): the store's sweep
   * (`deleteExpiredThreads`, or its `deleteExpiredEveryMs` option) deletes it then, with its
   * history and ledger. Returns `false` when the thread does not exist.
   */
  async setDeleteAfter({ threadId }: { threadId: string }, at: Date | null): Promise<boolean> {
    requireId(threadId, "threadId");
    if (at !== null && (!(at instanceof Date) || Number.isNaN(at.getTime()))) {
      throw new InvalidRunError("INPUT_001", "setDeleteAfter: at must be a valid Date, or null");
    }
    return this.#deps.checkpointer.setDeleteAfter(threadId, at);
  }

  /** Every tool call recorded for the thread, oldest first (not the run lease, which is no call). */
  async getToolLedger({ threadId }: { threadId: string }): Promise<LedgerEntry[]> {
    requireId(threadId, "threadId");
    const entries = await this.#deps.checkpointer.listCalls(threadId);
    return entries.filter((entry) => entry.key !== RUN_LEASE_KEY);
  }

  /** Deletes the thread's state, messages and ledger. */
  async deleteThread({ threadId }: { threadId: string }): Promise<void> {
    requireId(threadId, "threadId");
    await this.#deps.checkpointer.deleteThread(threadId);
  }

  async #execute(
    input: RunInput<S>,
    config: RunConfig,
    controls: HostControls,
    send: RunEventSink,
    abort: AbortController,
    call: "invoke" | "stream",
  ): Promise<RunResult<S>> {
    const resolved = resolveRunConfig(config, this.#deps.logger, this.#deps.ids, call, controls);
    const where = `${call}() config`;
    resolved.breakpoints = resolveBreakpoints(
      config,
      this.#deps.graph.nodes,
      where,
      this.#breakpoints,
    );
    const runId = this.#deps.ids();
    const active = this.#activeRuns.get(resolved.threadId) ?? new Set();
    this.#activeRuns.set(resolved.threadId, active.add(abort));
    try {
      return await executeRun(this.#deps, resolved, input, send, abort, runId);
    } finally {
      active.delete(abort);
      if (active.size === 0) this.#activeRuns.delete(resolved.threadId);
      this.#rememberEnded(runId);
    }
  }

  #rememberEnded(runId: string): void {
    this.#endedRuns.add(runId);
    if (this.#endedRuns.size > ENDED_RUNS_REMEMBERED) {
      this.#endedRuns.delete(this.#endedRuns.values().next().value!);
    }
  }
}

/** A version number (a whole number >= 1), or `INPUT_001` naming the option. */
function requireVersion(value: unknown, name: string): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 1) return value;
  throw new InvalidRunError(
    "INPUT_001",
    `${name} must be a version (a whole number >= 1), got ${String(value)}`,
  );
}

function requireCount(value: unknown, name: string, min = 0): void {
  if (typeof value === "number" && Number.isInteger(value) && value >= min) return;
  throw new InvalidRunError(
    "INPUT_001",
    `${name} must be a whole number >= ${min}, got ${String(value)}`,
  );
}

/** `config.streamMode`, checked by `resolveStreamMode`; a config that is no object is `resolveRunConfig`'s to refuse. */
function streamModeOf(config: unknown): unknown {
  return typeof config === "object" && config !== null
    ? (config as { streamMode?: unknown }).streamMode
    : undefined;
}
