import { isRemoteToolCall, type BaseState, type ThreadState } from "@tenxgraph/core";
import { THREAD_NAME_FIELD } from "../thread-name.js";
import { toWireMessage } from "./convert-message.js";

/** 10xGraph's `execution_meta.status` for a tenxgraph thread status. */
const STATUS: Record<string, string> = {
  running: "running",
  completed: "completed",
  interrupted: "interrupted_after",
  stopped: "completed",
  failed: "error",
};

/**
 * A thread's state as 10xGraph's `AgentState` dump: the transcript as `context`, the run's
 * position in `execution_meta` (core field names), and every other state field as is.
 * tenxgraph's own `status`, `version` and pending `interrupts` ride in `execution_meta.internal_data`.
 */
export function toWireState(
  threadId: string,
  state: Pick<
    ThreadState<BaseState>,
    "values" | "version" | "currentNode" | "step" | "status" | "interrupts"
  >,
): Record<string, unknown> {
  const {
    messages,
    [THREAD_NAME_FIELD]: _name,
    ...fields
  } = state.values as typeof state.values & Record<string, unknown>;
  const interrupt = state.interrupts[0];
  return {
    ...fields,
    context: messages.map(toWireMessage),
    context_summary: null,
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
