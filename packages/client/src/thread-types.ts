import type { ThreadStatus } from "./wire-state.js";

/** A thread as lists and details show it. */
export interface ThreadInfo {
  thread_id: string;
  thread_name: string | null;
  user_id: string | null;
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
