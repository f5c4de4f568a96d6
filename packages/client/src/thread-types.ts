import type { MessageInput } from "./wire-message.js";
import type { ThreadStatus } from "./wire-state.js";

/** A thread as lists and details show it. */
export interface ThreadInfo {
  thread_id: string;
  thread_name: string | null;
  user_id: string | null;
  /** The thread this one is a child of (a subgraph's thread); `null` for a top-level thread. */
  parent_thread_id: string | null;
  metadata: { status: ThreadStatus; version: number };
  updated_at: string | null;
  run_id: string | null;
}

/** Paging of `listThreads` and `listMessages`: `search` filters (thread ids and names; message text). */
export interface PageOptions {
  search?: string;
  /** Default 0. */
  offset?: number;
  /** 1..1000, default 100. */
  limit?: number;
  signal?: AbortSignal;
}

/** The answer to `deleteThread`. */
export interface DeleteThreadResult {
  success: true;
  message: string;
  data: { thread_id: string };
}

/** The answer to `clearState`: the thread's new version (its messages are kept). */
export interface ClearStateResult {
  success: true;
  message: string;
  data: { version: number };
}

/** The answer to `addMessages`: the thread's new version and the ids the messages got. */
export interface AddMessagesResult {
  success: true;
  message: string;
  data: { version: number; message_ids: string[] };
}

/** One version of a thread in `getStateHistory`, newest first; its transcript is not included. */
export interface StateHistoryEntry {
  version: number;
  /** The version it was made from (an earlier one for a fork); `null` for the first. */
  parent_version: number | null;
  step: number;
  /** The node whose step wrote it; `null` for input, an edit or a status change. */
  node: string | null;
  /** The node the thread was to run next (`null` at the end). */
  next_node: string | null;
  status: "running" | "completed" | "interrupted" | "stopped" | "failed";
  /** The run that wrote it; `null` for an edit. */
  run_id: string | null;
  created_at: string;
  /** State fields other than the transcript. */
  values: Record<string, unknown>;
  /** Messages in this version's transcript (`getState(threadId, { version })` reads them). */
  message_count: number;
  interrupts: unknown[];
  /** The OpenTelemetry trace of the run that wrote it; `null` when not traced (or an edit). */
  trace_id: string | null;
}

/** What `editState` changes: through the graph's reducers, as a node's update would. */
export interface StateEdit {
  /** State fields, each through its reducer. */
  values?: Record<string, unknown>;
  /** Messages: a new id is appended, the id of a message in the thread replaces it. */
  messages?: MessageInput[];
  /** Ids of messages to remove (the versions before keep them). */
  removeMessageIds?: string[];
  /** Write it as this node's output: the thread then stands at the node after it. */
  asNode?: string;
}
