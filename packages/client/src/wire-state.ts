import type { WireMessage } from "./wire-message.js";

/** A pause waiting for an answer: answer it with `client.resume(threadId, answer, { interruptId })`. */
export interface Interrupt {
  /** Stable across replays: derived from the tool call (or node and step) that paused. */
  id: string;
  /** What the node or tool asked, as given to `interrupt()`. */
  value: unknown;
  message?: string;
  node: string;
  toolCallId?: string;
  /**
   * When a durable timer answers it with `null` (ISO 8601): the interrupts of `ctx.sleep(ms)`
   * and of `interrupt(value, { resumeAt })`. An answer before then ends the wait.
   */
  resumeAt?: string;
}

/** A thread's status in tenxgraph. */
export type ThreadStatus = "running" | "completed" | "interrupted" | "stopped" | "failed";

/** Where a run is: 10xGraph's `execution_meta`, with tenxgraph's own in `internal_data`. */
export interface ExecutionMeta {
  current_node: string;
  step: number;
  status: "running" | "interrupted_before" | "interrupted_after" | "completed" | "error";
  interrupted_node: string[] | null;
  interrupt_reason: string | null;
  interrupt_data: { interrupts: Interrupt[] } | null;
  thread_id: string;
  stop_current_execution: "none" | "stop_requested" | "stopped";
  internal_data: { status: ThreadStatus; version: number; interrupts: Interrupt[] };
}

/**
 * A thread's state (10xGraph's `AgentState` dump): the transcript as `context`, the run's
 * position in `execution_meta`, and the graph's own fields as they are.
 */
export interface WireState {
  context: WireMessage[];
  /** The graph's state field `context_summary` (a summary its nodes or `updateState` keep), else `null`. */
  context_summary: string | null;
  execution_meta: ExecutionMeta;
  [field: string]: unknown;
}
