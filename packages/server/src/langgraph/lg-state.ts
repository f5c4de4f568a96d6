import type { BaseState, CompiledGraph, Interrupt, ThreadState } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import { ledgerByCall, lgInterrupt, lgThreadRecord, lgValues } from "./lg-values.js";

/** A run's durable write as the engine's `checkpoints` stream mode yields it. */
type CheckpointChunk = Omit<ThreadState<BaseState>, "createdAt" | "subgraphs">;

/** LangGraph's thread status for ours. */
export function lgThreadStatus(status: ThreadCheckpoint["status"]): string {
  if (status === "running") return "busy";
  if (status === "interrupted") return "interrupted";
  if (status === "failed") return "error";
  return "idle";
}

/** A version of ours as LangGraph's checkpoint reference: the version is the checkpoint id. */
export function lgCheckpoint(threadId: string, version: number | null) {
  return version === null
    ? null
    : {
        thread_id: threadId,
        checkpoint_ns: "",
        checkpoint_id: String(version),
        checkpoint_map: null,
      };
}

/** A checkpoint id a LangGraph client sends back: one of our versions, else a 422. */
export function versionOf(checkpointId: string, where: string[]): number {
  if (!/^[1-9][0-9]{0,15}$/.test(checkpointId))
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      `${where.join(".")}: unknown checkpoint id '${checkpointId}'`,
      [
        {
          loc: where,
          msg: "a checkpoint id of this server is a thread version",
          type: "value_error",
        },
      ],
    );
  return Number(checkpointId);
}

/** The interrupts of a state, grouped as LangGraph's tasks: one per waiting node. */
function lgTasks(interrupts: Interrupt[], step: number) {
  const byNode = new Map<string, Interrupt[]>();
  for (const i of interrupts) byNode.set(i.node, [...(byNode.get(i.node) ?? []), i]);
  return [...byNode].map(([node, list]) => ({
    id: `${node}:${step}`,
    name: node,
    path: ["__pregel_pull", node],
    error: null,
    interrupts: list.map(lgInterrupt),
    checkpoint: null,
    state: null,
    result: null,
  }));
}

/** How LangGraph names the writer of a version: input, a node (`loop`) or an edit (`update`). */
function sourceOf(node: string | null, runId: string | null): string {
  if (node !== null) return "loop";
  return runId === null ? "update" : "input";
}

/** A thread's state as LangGraph's `ThreadState`, tool calls' ledger state in message metadata. */
export async function lgThreadState(
  graph: CompiledGraph<BaseState>,
  threadId: string,
  state: ThreadState<BaseState>,
) {
  const ledger = await graph.getToolLedger({ threadId });
  const values = state.values as unknown as Record<string, unknown>;
  const record = lgThreadRecord(values, state.createdAt);
  return {
    values: lgValues(values, ledgerByCall(state.values.messages, ledger)),
    next: state.status === "completed" ? [] : state.next,
    tasks: lgTasks(state.interrupts, state.step),
    checkpoint: lgCheckpoint(threadId, state.version),
    parent_checkpoint: lgCheckpoint(threadId, state.parentVersion),
    created_at: state.createdAt,
    metadata: lgCheckpointMetadata(threadId, record.metadata, state),
  };
}

/**
 * A durable write of a run as the data of LangGraph's `checkpoints` stream event: the state,
 * what runs next, its config (the version as the checkpoint id), metadata and waiting tasks.
 */
export function lgCheckpointEvent(threadId: string, chunk: CheckpointChunk) {
  const values = chunk.values as unknown as Record<string, unknown>;
  const record = lgThreadRecord(values, "");
  return {
    values: lgValues(values),
    next: chunk.status === "completed" ? [] : chunk.next,
    config: { configurable: lgCheckpoint(threadId, chunk.version) },
    parent_config:
      chunk.parentVersion === null
        ? null
        : { configurable: lgCheckpoint(threadId, chunk.parentVersion) },
    metadata: lgCheckpointMetadata(threadId, record.metadata, chunk),
    tasks: lgTasks(chunk.interrupts, chunk.step),
  };
}

function lgCheckpointMetadata(
  threadId: string,
  metadata: Record<string, unknown>,
  state: Pick<CheckpointChunk, "node" | "runId" | "step" | "version" | "status">,
) {
  return {
    ...metadata,
    source: sourceOf(state.node, state.runId),
    step: state.step,
    writes: null,
    parents: {},
    thread_id: threadId,
    ...(state.runId === null ? {} : { run_id: state.runId }),
    tenxgraph: { version: state.version, status: state.status },
  };
}

/** A thread as LangGraph's `Thread`: its record, status, latest values and pending interrupts. */
export async function lgThread(graph: CompiledGraph<BaseState>, checkpoint: ThreadCheckpoint) {
  const { threadId } = checkpoint;
  const state = await graph.getState({ threadId });
  const values = (state?.values ?? checkpoint.values) as unknown as Record<string, unknown>;
  const record = lgThreadRecord(values, checkpoint.updatedAt);
  const ledger = state
    ? ledgerByCall(state.values.messages, await graph.getToolLedger({ threadId }))
    : undefined;
  const tasks = lgTasks(checkpoint.interrupts, checkpoint.step);
  return {
    thread_id: threadId,
    created_at: record.created_at,
    updated_at: checkpoint.updatedAt,
    state_updated_at: checkpoint.updatedAt,
    metadata: record.metadata,
    status: lgThreadStatus(checkpoint.status),
    values: lgValues(values, ledger),
    interrupts: Object.fromEntries(tasks.map((t) => [t.id, t.interrupts])),
    config: {},
    error: null,
  };
}
