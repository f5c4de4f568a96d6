import { isChildThreadId } from "@tenxgraph/core/host";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";

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

/**
 * Refuses to create a thread whose id has the shape of a subgraph's child thread (422
 * `CHILD_THREAD_ID`): only a parent's run creates those. A thread created there by a client
 * would sit where the parent's subgraph later looks for its own child.
 */
export function refuseChildThreadId(threadId: string): void {
  if (!isChildThreadId(threadId)) return;
  throw new ApiError(
    422,
    "CHILD_THREAD_ID",
    `Thread id '${threadId}' has the shape of a subgraph's child thread ('<parent>|<node>@<step>'): ` +
      `only a parent's run creates those; choose an id without that ending`,
    [{ loc: ["thread_id"], msg: "reserved for subgraph child threads", type: "value_error" }],
  );
}
