import type { Checkpointer } from "@tenxgraph/core/storage";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";

declare const grantMark: unique symbol;

/**
 * What {@link grantThread} found: `user` may `action` the thread, whose checkpoint this is as it
 * was read for the check (`null`: no thread yet). It names whom and what it was granted for, so
 * code handed one for another user, thread or action makes the check again instead of trusting
 * it (see {@link grantedCheckpoint}).
 */
export interface ThreadGrant {
  readonly user: AuthUser;
  readonly threadId: string;
  readonly action: string;
  readonly checkpoint: ThreadCheckpoint | null;
  readonly [grantMark]: true;
}

/**
 * The grant to `action` the thread if `user` may, else a 403. A thread that does not exist is
 * allowed (the caller becomes its owner with its first run). Without auth there are no owners.
 * Ownership is the `userId` stored with the thread's checkpoints, set by the run that created it.
 */
export async function grantThread(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ThreadGrant> {
  const checkpoint = await checkpointer.getCheckpoint(threadId);
  if (user.authenticated && checkpoint !== null && checkpoint.userId !== user.id) {
    throw new ApiError(
      403,
      "PERMISSION_DENIED",
      `Not authorized to ${action} thread '${threadId}'`,
    );
  }
  return { user, threadId, action, checkpoint } as ThreadGrant;
}

/** The thread's checkpoint if `user` may act on it, else a 403 (see {@link grantThread}). */
export async function authorizeThread(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ThreadCheckpoint | null> {
  return (await grantThread(checkpointer, user, threadId, action)).checkpoint;
}

/**
 * The checkpoint `grant` read, when it was granted to this `user` for this thread and action;
 * else the check is made (and the checkpoint read) again.
 */
export async function grantedCheckpoint(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
  grant: ThreadGrant | undefined,
): Promise<ThreadCheckpoint | null> {
  const fits =
    grant !== undefined &&
    grant.user === user &&
    grant.threadId === threadId &&
    grant.action === action;
  return fits ? grant.checkpoint : authorizeThread(checkpointer, user, threadId, action);
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
