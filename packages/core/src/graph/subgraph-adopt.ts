import { InvalidRunError } from "../errors/errors.js";
import type { ThreadCheckpoint } from "../storage/checkpointer.js";

/**
 * Refuses a thread found at a subgraph's child id that this parent did not create
 * (`THREAD_006`): a thread created there by someone else (another user, or a client that chose
 * the id) is not the child's earlier turn, and adopting it would read its messages as the
 * child's reply and skip the work. The child is this parent's only when the store recorded
 * `parentThreadId` as this parent on its first write and its owner is the parent's user.
 * Nothing is written.
 */
export function requireOwnChild(
  child: ThreadCheckpoint,
  parentThreadId: string,
  userId: string | null,
): void {
  const owner = child.userId ?? null;
  if (owner === userId && child.parentThreadId === parentThreadId) return;
  throw new InvalidRunError(
    "THREAD_006",
    `Thread '${child.threadId}' holds the id of a child of '${parentThreadId}' but was not ` +
      `created by it: the subgraph does not adopt it, and nothing was written`,
  );
}
