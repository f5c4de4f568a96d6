import { runAsHost, type CompiledGraph } from "../graph/compiled-graph.js";
import type { BaseState } from "../definition/reducers.js";
import { NO_HOST_CONTROLS, type HostControls } from "../runtime/host-controls.js";
import type { RunConfig } from "../runtime/run-config.js";
import type { RunInput, RunResult } from "../runtime/run-result.js";
import { continuationRefusal as refusalOf } from "../runtime/thread-migration.js";
import type { TenxgraphError } from "../errors/tenxgraph-error.js";
import type { ThreadCheckpoint } from "../storage/checkpointer.js";
import type { StreamConfig, StreamModeOption, StreamOutput } from "../runtime/stream-mode.js";

/** `graph.invoke(input, config)`, steered by the host's `controls` as well. */
export function invokeAsHost<S extends BaseState>(
  graph: CompiledGraph<S>,
  input: RunInput<S>,
  config: RunConfig,
  controls: HostControls,
): Promise<RunResult<S>> {
  return runAsHost.invoke(graph, input, config, controls ?? NO_HOST_CONTROLS);
}

/** `graph.stream(input, config)`, steered by the host's `controls` as well. */
export function streamAsHost<S extends BaseState, const M extends StreamModeOption = "events">(
  graph: CompiledGraph<S>,
  input: RunInput<S>,
  config: StreamConfig<M>,
  controls: HostControls,
): AsyncGenerator<StreamOutput<S, M>> {
  return runAsHost.stream(graph, input, config, controls ?? NO_HOST_CONTROLS);
}

/**
 * Why `graph` cannot continue the thread: the `THREAD_007` error a run of it would be refused
 * with (the thread was written by another version of the graph, and needs a node or tool this
 * one lacks), or `null` when it can, or the thread does not exist. Reads; writes nothing.
 * `checkpoint`, when given, is the thread's checkpoint as the host just read it from
 * `graph.checkpointer` (`null`: no thread), so the check does not read it again.
 */
export function continuationRefusal<S extends BaseState>(
  graph: CompiledGraph<S>,
  threadId: string,
  checkpoint?: ThreadCheckpoint | null,
): Promise<TenxgraphError | null> {
  return refusalOf(graph.definition, graph.checkpointer, threadId, checkpoint);
}
