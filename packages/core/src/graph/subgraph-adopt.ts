import { InvalidRunError } from "../errors/errors.js";
import type { Checkpointer, ThreadCheckpoint } from "../storage/checkpointer.js";

/** Children read at a time while looking for the child among its parent's. */
const CHILDREN_PAGE = 500;

/**
 * Refuses a thread found at a subgraph's child id that this parent did not create
 * (`THREAD_006`): a thread created there by someone else (another user, or a client that chose
 * the id) is not the child's earlier turn, and adopting it would read its messages as the
 * child's reply and skip the work. The child is this parent's only when the store recorded
 * `parentThreadId` as this parent on its first write and its owner is the parent's user.
 * Nothing is written.
 */
export async function requireOwnChild(
  checkpointer: Checkpointer,
  child: ThreadCheckpoint,
  parentThreadId: string,
  userId: string | null,
): Promise<void> {
  const owner = child.userId ?? null;
  if (owner === userId && (await isChildOf(checkpointer, child.threadId, parentThreadId))) return;
  throw new InvalidRunError(
    "THREAD_006",
    `Thread '${child.threadId}' holds the id of a child of '${parentThreadId}' but was not ` +
      `created by it: the subgraph does not adopt it, and nothing was written`,
  );
}

async function isChildOf(
  checkpointer: Checkpointer,
  threadId: string,
  parentThreadId: string,
): Promise<boolean> {
  for (let offset = 0; ; offset += CHILDREN_PAGE) {
    const page = { parentThreadId, limit: CHILDREN_PAGE, offset };
    const children = await checkpointer.listThreads(page);
    if (children.some((child) => child.threadId === threadId)) return true;
    if (children.length < CHILDREN_PAGE) return false;
  }
}
