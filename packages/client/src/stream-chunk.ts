import type { WireMessage } from "./wire-message.js";
import type { WireState } from "./wire-state.js";

/**
 * One line of a stream (10xGraph's `StreamChunk`). `message` chunks carry a message (`delta`
 * true for model tokens); `updates` carry `data.status` (`run_started`, `node_invoked`,
 * `tool_started`, `tool_completed`, `interrupted`, `graph_invoked`, `stopped`);
 * `state` carry `data.version`; an `error` chunk (`data.reason`, `data.code`) is the last line
 * of a run that failed after the stream began. Every chunk's `metadata` names the thread.
 */
export interface StreamChunk {
  event: "message" | "updates" | "state" | "error";
  message: WireMessage | null;
  state: WireState | null;
  data: Record<string, unknown> | null;
  thread_id: string | null;
  run_id: string | null;
  metadata: { thread_id?: string; is_new_thread?: boolean; [key: string]: unknown };
  /** Seconds since the epoch. */
  timestamp: number;
}
