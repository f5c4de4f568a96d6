import type { ExecutionMeta, WireState } from "@tenxgraph/client";
import type { BaseState, ThreadState } from "@tenxgraph/core";
import { isRemoteToolCall } from "@tenxgraph/core/host";
import { LG_THREAD_FIELD, THREAD_NAME_FIELD } from "./thread-name-field.js";
import { toWireMessage } from "./convert-message.js";

/** 10xGraph's `execution_meta.status` for a tenxgraph thread status. */
const STATUS: Record<string, ExecutionMeta["status"]> = {
  running: "running",
  completed: "completed",
  interrupted: "interrupted_after",
  stopped: "completed",
  failed: "error",
};

/**
 * The state field that is 10xGraph's `context_summary`, under the same name: a graph that keeps
 * a summary declares it (`initialState: { context_summary: null }`) and its nodes write it;
 * `PUT …/state` writes it too. The wire shows it as a string or `null`.
 */
export const SUMMARY_FIELD = "context_summary";

/** `AgentState`'s own fields, in 10xGraph's order, before the graph's fields. */
const AGENT_STATE_FIELDS = ["context", SUMMARY_FIELD, "execution_meta"];

/**
 * The field names of the wire state for a graph that starts from `initialState`: `AgentState`'s
 * (`context` is the transcript, tenxgraph's `messages`), then the graph's own fields.
 */
export function wireStateFields(initialState: Record<string, unknown>): string[] {
  const own = Object.keys(initialState).filter(
    (key) =>
      key !== "messages" &&
      key !== THREAD_NAME_FIELD &&
      key !== LG_THREAD_FIELD &&
      !AGENT_STATE_FIELDS.includes(key),
  );
  return [...AGENT_STATE_FIELDS, ...own];
}

/** A thread's summary as the wire shows it (`null` when the state keeps none). */
export function wireSummary(values: Record<string, unknown>): string | null {
  const summary = values[SUMMARY_FIELD];
  return typeof summary === "string" ? summary : null;
}

/**
 * A thread's state as 10xGraph's `AgentState` dump: the transcript as `context`, the summary
 * field as `context_summary`, the run's position in `execution_meta` (core field names), and
 * every other state field as is. tenxgraph's own `status`, `version` and pending `interrupts`
 * ride in `execution_meta.internal_data`.
 */
export function toWireState(
  threadId: string,
  state: Pick<
    ThreadState<BaseState>,
    "values" | "version" | "currentNode" | "step" | "status" | "interrupts"
  >,
): WireState {
  const values = state.values as typeof state.values & Record<string, unknown>;
  const {
    messages,
    [THREAD_NAME_FIELD]: _name,
    [LG_THREAD_FIELD]: _record,
    [SUMMARY_FIELD]: _summary,
    ...fields
  } = values;
  const interrupt = state.interrupts[0];
  return {
    ...fields,
    context: messages.map(toWireMessage),
    context_summary: wireSummary(values),
    execution_meta: {
      current_node: state.currentNode ?? "__end__",
      step: state.step,
      status: STATUS[state.status] ?? "running",
      interrupted_node: interrupt ? [interrupt.node] : null,
      interrupt_reason: !interrupt
        ? null
        : isRemoteToolCall(interrupt.value)
          ? "remote_tool_call"
          : (interrupt.message ?? "interrupt"),
      interrupt_data: interrupt ? { interrupts: state.interrupts } : null,
      thread_id: threadId,
      stop_current_execution: state.status === "stopped" ? "stopped" : "none",
      internal_data: { status: state.status, version: state.version, interrupts: state.interrupts },
    },
  };
}
