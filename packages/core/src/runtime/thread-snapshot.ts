import type { Message } from "../messages/message.js";
import type { Checkpointer, ThreadCheckpoint } from "../storage/checkpointer.js";

const PAGE_SIZE = 1000;

/** A thread's latest checkpoint with its whole transcript. */
export interface ThreadSnapshot {
  checkpoint: ThreadCheckpoint;
  messages: Message[];
}

/** Reads a thread's checkpoint and transcript, or `null` when it does not exist. */
export async function loadThread(
  checkpointer: Checkpointer,
  threadId: string,
): Promise<ThreadSnapshot | null> {
  const checkpoint = await checkpointer.getCheckpoint(threadId);
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
  return { checkpoint, messages };
}
