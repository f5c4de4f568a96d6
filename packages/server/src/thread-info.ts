import type { Checkpointer, ThreadSummary } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "./api-error.js";
import { storedThreadName } from "./thread-name.js";

/**
 * 10xGraph's `ThreadInfo`, with tenxgraph's status and version in `metadata` and, beyond it, the
 * parent of a subgraph's thread (`null` for a top-level one). The name is read from the
 * checkpoint's values; a listing's summaries carry none, so give their checkpoints.
 */
export function threadInfo(
  thread: ThreadSummary | ThreadCheckpoint,
  parentThreadId: string | null,
) {
  return {
    thread_id: thread.threadId,
    thread_name: "values" in thread ? storedThreadName(thread.values) : null,
    user_id: thread.userId,
    parent_thread_id: parentThreadId,
    metadata: { status: thread.status, version: thread.version },
    updated_at: thread.updatedAt,
    run_id: null,
  };
}

/** Children read at a time while looking for a thread among its candidate parent's. */
const CHILDREN_PAGE = 500;

/**
 * The thread `threadId` is a child of, or `null`. A checkpoint does not carry its parent, only
 * the store's listings do: a subgraph names its child `<parent>|<node>@<step>`, so the candidate
 * is the id before its last '|', and it counts only when the store lists the thread among that
 * candidate's children (a top-level id that merely holds a '|' has no parent).
 */
export async function parentOf(
  checkpointer: Checkpointer,
  threadId: string,
): Promise<string | null> {
  const cut = threadId.lastIndexOf("|");
  if (cut <= 0) return null;
  const candidate = threadId.slice(0, cut);
  for (let offset = 0; ; offset += CHILDREN_PAGE) {
    const page = { parentThreadId: candidate, limit: CHILDREN_PAGE, offset };
    const children = await checkpointer.listThreads(page);
    if (children.some((child) => child.threadId === threadId)) return candidate;
    if (children.length < CHILDREN_PAGE) return null;
  }
}

/**
 * Refuses to `action` a subgraph's thread on its own (409 `SUBGRAPH_THREAD`): it runs the child
 * graph, not the served one, and only its parent's run may move it.
 */
export async function refuseSubgraphThread(
  checkpointer: Checkpointer,
  threadId: string,
  action: string,
): Promise<void> {
  const parent = await parentOf(checkpointer, threadId);
  if (parent === null) return;
  throw new ApiError(
    409,
    "SUBGRAPH_THREAD",
    `Thread '${threadId}' is a subgraph's thread of '${parent}': it cannot ${action} on its own; ` +
      `run or edit '${parent}' instead`,
  );
}
