import type { Checkpointer, ThreadSummary } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
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
  const children = await checkpointer.listThreads({ parentThreadId: candidate });
  return children.some((child) => child.threadId === threadId) ? candidate : null;
}
