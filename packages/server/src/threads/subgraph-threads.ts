import type { ThreadSummary } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import { storedThreadName } from "./thread-name.js";

/**
 * 10xGraph's `ThreadInfo`, with tenxgraph's status and version in `metadata` and, beyond it, the
 * parent of a subgraph's thread (`null` for a top-level one). The name is read from the
 * checkpoint's values; a listing's summaries carry none, so give their checkpoints.
 */
export function threadInfo(thread: ThreadSummary | ThreadCheckpoint) {
  return {
    thread_id: thread.threadId,
    thread_name: "values" in thread ? storedThreadName(thread.values) : null,
    user_id: thread.userId,
    parent_thread_id: thread.parentThreadId,
    metadata: { status: thread.status, version: thread.version },
    updated_at: thread.updatedAt,
    run_id: null,
  };
}

/**
 * Refuses to `action` a subgraph's thread on its own (409 `SUBGRAPH_THREAD`): it runs the child
 * graph, not the served one, and only its parent's run may move it. The checkpoint names the
 * parent the store recorded, so a top-level id that merely looks like a child's passes.
 */
export function refuseSubgraphThread(checkpoint: ThreadCheckpoint, action: string): void {
  const { threadId, parentThreadId: parent } = checkpoint;
  if (parent === null) return;
  throw new ApiError(
    409,
    "SUBGRAPH_THREAD",
    `Thread '${threadId}' is a subgraph's thread of '${parent}': it cannot ${action} on its own; ` +
      `run or edit '${parent}' instead`,
  );
}
