import type { Checkpointer } from "@tenxgraph/core/storage";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";

/**
 * The thread's checkpoint if `user` may act on it, else a 403. A thread that does not exist is
 * allowed (the caller becomes its owner with its first run). Without auth there are no owners.
 * Ownership is the `userId` stored with the thread's checkpoints, set by the run that created it.
 */
export async function authorizeThread(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ThreadCheckpoint | null> {
  const checkpoint = await checkpointer.getCheckpoint(threadId);
  if (!user.authenticated || checkpoint === null) return checkpoint;
  if (checkpoint.userId !== user.id) {
    throw new ApiError(
      403,
      "PERMISSION_DENIED",
      `Not authorized to ${action} thread '${threadId}'`,
    );
  }
  return checkpoint;
}

/** Like {@link authorizeThread}, but a thread that does not exist is a 404. */
export async function requireThread(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ThreadCheckpoint> {
  const checkpoint = await authorizeThread(checkpointer, user, threadId, action);
  if (checkpoint === null) throw new ApiError(404, "NOT_FOUND", `Thread '${threadId}' not found`);
  return checkpoint;
}
