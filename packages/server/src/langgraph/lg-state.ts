import type { BaseState, CompiledGraph, Interrupt, ThreadState } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import { ledgerByCall, lgInterrupt, lgThreadRecord, lgValues } from "./lg-values.js";

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
    next: state.currentNode === null || state.status === "completed" ? [] : [state.currentNode],
    tasks: lgTasks(state.interrupts, state.step),
    checkpoint: lgCheckpoint(threadId, state.version),
    parent_checkpoint: lgCheckpoint(threadId, state.parentVersion),
    created_at: state.createdAt,
    metadata: {
      ...record.metadata,
      source: sourceOf(state.node, state.runId),
      step: state.step,
      writes: null,
      parents: {},
      thread_id: threadId,
      ...(state.runId === null ? {} : { run_id: state.runId }),
      tenxgraph: { version: state.version, status: state.status },
    },
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
