import type { ThreadInfo } from "@tenxgraph/client";
import type { ThreadSummary } from "@tenxgraph/core/storage";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { storedThreadName } from "./thread-name-field.js";

/**
 * 10xGraph's `ThreadInfo`, with tenxgraph's status and version in `metadata` and, beyond it, the
 * parent of a subgraph's thread (`null` for a top-level one). The name is read from the
 * checkpoint's values; a listing's summaries carry none, so give their checkpoints.
 */
export function threadInfo(thread: ThreadSummary | ThreadCheckpoint): ThreadInfo {
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
