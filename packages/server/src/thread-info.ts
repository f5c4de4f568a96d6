import type { ThreadSummary } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";

/** 10xGraph's `ThreadInfo`, with tenxgraph's status and version in `metadata`. */
export function threadInfo(thread: ThreadSummary | ThreadCheckpoint) {
  return {
    thread_id: thread.threadId,
    thread_name: null,
    user_id: thread.userId,
    metadata: { status: thread.status, version: thread.version },
    updated_at: thread.updatedAt,
    run_id: null,
  };
}
