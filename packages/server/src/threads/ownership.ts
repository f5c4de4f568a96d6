import type { Checkpointer, CheckpointRead, ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";

declare const grantMark: unique symbol;

/**
 * What {@link grantThread} found: `user` may `action` the thread, which `read` holds as it was
 * read for the check (checkpoint `null`: no thread yet), with its stop count, so a run can start
 * from it. It names whom and what it was granted for, so code handed one for another user,
 * thread or action makes the check again instead of trusting it (see {@link grantedRead}).
 */
export interface ThreadGrant {
  readonly user: AuthUser;
  readonly threadId: string;
  readonly action: string;
  readonly read: CheckpointRead;
  readonly [grantMark]: true;
}

/**
 * The grant to `action` the thread if `user` may, else a 403, with the thread read for a run to
 * start from (its checkpoint and stop count, in one round trip). Only a check a run starts from
 * needs the stop count; every other check reads the checkpoint alone ({@link authorizeThread}).
 */
export async function grantThread(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ThreadGrant> {
  const read = await checkpointer.getCheckpointAndStops(threadId);
  refuseOthers(user, threadId, read.checkpoint, action);
  return { user, threadId, action, read } as ThreadGrant;
}

/**
 * A 403 unless `user` may `action` the thread whose checkpoint is `checkpoint`. A thread that
 * does not exist is allowed (the caller becomes its owner with its first run). Without auth
 * there are no owners. Ownership is the `userId` stored with the thread's checkpoints, set by
 * the run that created it.
 */
function refuseOthers(
  user: AuthUser,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
  action: string,
): void {
  if (user.authenticated && checkpoint !== null && checkpoint.userId !== user.id) {
    throw new ApiError(
      403,
      "PERMISSION_DENIED",
      `Not authorized to ${action} thread '${threadId}'`,
    );
  }
}

/** The thread's checkpoint (`null`: none yet) if `user` may act on it, else a 403. */
export async function authorizeThread(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ThreadCheckpoint | null> {
  const checkpoint = await checkpointer.getCheckpoint(threadId);
  refuseOthers(user, threadId, checkpoint, action);
  return checkpoint;
}

/**
 * What `grant` read, when it was granted to this `user` for this thread and action; else the
 * check is made (and the thread read) again.
 */
export async function grantedRead(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
  grant: ThreadGrant | undefined,
): Promise<CheckpointRead> {
  const fits =
    grant !== undefined &&
    grant.user === user &&
    grant.threadId === threadId &&
    grant.action === action;
  return fits ? grant.read : (await grantThread(checkpointer, user, threadId, action)).read;
}

/** A read of a thread that exists. */
export type ExistingThreadRead = CheckpointRead & { checkpoint: ThreadCheckpoint };

/** Like {@link authorizeThread}, but a thread that does not exist is a 404. */
export async function requireThread(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ThreadCheckpoint> {
  const checkpoint = await authorizeThread(checkpointer, user, threadId, action);
  return checkpoint ?? notFound(threadId);
}

/** {@link requireThread} with the thread's stop count, for a run to start from. */
export async function requireThreadRead(
  checkpointer: Checkpointer,
  user: AuthUser,
  threadId: string,
  action: string,
): Promise<ExistingThreadRead> {
  const { read } = await grantThread(checkpointer, user, threadId, action);
  const { checkpoint, stopRequests } = read;
  return { checkpoint: checkpoint ?? notFound(threadId), stopRequests };
}

function notFound(threadId: string): never {
  throw new ApiError(404, "NOT_FOUND", `Thread '${threadId}' not found`);
}
