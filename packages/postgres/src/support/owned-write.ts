import { Message } from "@tenxgraph/core";
import type { CheckpointWrite, Checkpointer } from "@tenxgraph/core/storage";

/**
 * The write that takes `owner`'s thread from `expectedVersion` to the next version. Its user id,
 * its values and its message all name the owner, so a read shows whose state it got.
 */
export function ownedWrite(
  threadId: string,
  owner: string,
  expectedVersion: number,
): CheckpointWrite {
  return {
    threadId,
    // Each owner's thread of this id is a life of its own.
    incarnation: `${owner}'s life of ${threadId}`,
    userId: owner,
    step: expectedVersion + 1,
    currentNode: "MAIN",
    status: "running",
    values: { owner },
    interrupts: [],
    resumeAnswers: {},
    expectedVersion,
    newMessages: [Message.user(`${owner}'s message ${expectedVersion + 1}`)],
  };
}

/** Versions 1 and 2 of `owner`'s thread. */
export async function twoVersions(
  store: Checkpointer,
  threadId: string,
  owner: string,
): Promise<void> {
  await store.putCheckpoint(ownedWrite(threadId, owner, 0));
  await store.putCheckpoint(ownedWrite(threadId, owner, 1));
}
