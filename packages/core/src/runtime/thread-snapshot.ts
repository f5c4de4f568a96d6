import type { Message } from "../messages/message.js";
import type { Checkpointer, CheckpointWrite, ThreadCheckpoint } from "../storage/checkpointer.js";

const PAGE_SIZE = 1000;

/** A thread's latest checkpoint with its whole transcript. */
export interface ThreadSnapshot {
  checkpoint: ThreadCheckpoint;
  messages: Message[];
  /**
   * How many of `messages` the durable store holds. Fewer than all when the snapshot includes a
   * cached step (`durableCheckpointEveryStep: false`): the next durable write must carry the rest.
   */
  durableMessages: number;
}

/**
 * Reads a thread's checkpoint and transcript, or `null` when it does not exist. A cached step
 * made after the latest durable write is laid over it: that is where the thread really stands.
 */
export async function loadThread(
  checkpointer: Checkpointer,
  threadId: string,
  /** The checkpoint when the caller just read it (`undefined`: read it here). */
  known?: ThreadCheckpoint | null,
): Promise<ThreadSnapshot | null> {
  const checkpoint = known === undefined ? await checkpointer.getCheckpoint(threadId) : known;
  if (!checkpoint) return null;
  const messages: Message[] = [];
  while (messages.length < checkpoint.messageCount) {
    const page = await checkpointer.listMessages(threadId, {
      offset: messages.length,
      // Never past the checkpoint's count: a write landing meanwhile must not mix versions.
      limit: Math.min(PAGE_SIZE, checkpoint.messageCount - messages.length),
    });
    if (page.length === 0) break;
    messages.push(...page);
  }
  const durable: ThreadSnapshot = { checkpoint, messages, durableMessages: messages.length };
  const cached = await checkpointer.getCachedStep?.(threadId);
  const current =
    cached?.expectedVersion === checkpoint.version && cached.incarnation === checkpoint.incarnation;
  return cached && current ? withCachedStep(durable, cached) : durable;
}

function withCachedStep(durable: ThreadSnapshot, cached: CheckpointWrite): ThreadSnapshot {
  const { expectedVersion: _, newMessages, threadId: __, ...fields } = cached;
  return {
    checkpoint: { ...durable.checkpoint, ...fields },
    messages: [...durable.messages, ...newMessages],
    durableMessages: durable.durableMessages,
  };
}
