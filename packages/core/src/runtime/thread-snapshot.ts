import type { Message } from "../messages/message.js";
import type { BaseState } from "../definition/reducers.js";
import type { RunDependencies } from "./run-dependencies.js";
import type { RunResult } from "./run-result.js";
import { applyTranscriptChange } from "./transcript-change.js";
import type { Checkpointer, CheckpointWrite, ThreadCheckpoint } from "../storage/checkpointer.js";

const PAGE_SIZE = 1000;

/** A thread's latest checkpoint with its whole transcript. */
export interface ThreadSnapshot {
  checkpoint: ThreadCheckpoint;
  messages: Message[];
  /**
   * The transcript the durable store holds. Not `messages` when the snapshot includes a cached
   * step (`durableCheckpointEveryStep: false`): the next durable write must carry the difference.
   */
  durable: readonly Message[];
  /** Set when the snapshot is a past version a run forks from: that version. */
  forkOf?: number;
  /**
   * Set when a migration renamed the node of the thread's pending interrupts: their ids (which
   * the caller answers by) to the ids the node raises them by under its new name.
   */
  answerIds?: ReadonlyMap<string, string>;
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
  // Read as of the checkpoint's version: a write landing meanwhile must not mix versions.
  const messages = await loadTranscript(checkpointer, checkpoint);
  const durable: ThreadSnapshot = { checkpoint, messages, durable: messages };
  const cached = await checkpointer.getCachedStep?.(threadId);
  const current =
    cached?.expectedVersion === checkpoint.version && cached.incarnation === checkpoint.incarnation;
  return cached && current ? withCachedStep(durable, cached) : durable;
}

/** A version of the thread with its transcript, or `null` when the store does not keep it. */
export async function loadVersion(
  checkpointer: Checkpointer,
  threadId: string,
  version: number,
): Promise<{ checkpoint: ThreadCheckpoint; messages: Message[] } | null> {
  const checkpoint = await checkpointer.getVersion(threadId, version);
  if (!checkpoint) return null;
  return { checkpoint, messages: await loadTranscript(checkpointer, checkpoint) };
}

/** The transcript of `checkpoint`'s version, page by page. */
async function loadTranscript(
  checkpointer: Checkpointer,
  checkpoint: ThreadCheckpoint,
): Promise<Message[]> {
  const { threadId, version, messageCount } = checkpoint;
  const messages: Message[] = [];
  while (messages.length < messageCount) {
    const page = await checkpointer.listMessages(threadId, {
      offset: messages.length,
      limit: Math.min(PAGE_SIZE, messageCount - messages.length),
      version,
    });
    if (page.length === 0) break;
    messages.push(...page);
  }
  return messages;
}

function withCachedStep(durable: ThreadSnapshot, cached: CheckpointWrite): ThreadSnapshot {
  const {
    expectedVersion: _,
    threadId: __,
    newMessages,
    replacedMessages = [],
    removedMessageIds = [],
    parentVersion: ___,
    node = null,
    runId = null,
    parentThreadId: ____,
    ...fields
  } = cached;
  const change = { newMessages, replacedMessages, removedMessageIds };
  return {
    checkpoint: { ...durable.checkpoint, ...fields, node, runId },
    messages: applyTranscriptChange(durable.messages, change),
    durable: durable.messages,
  };
}

/** The result of a run stopped before it began: the thread as it is, untouched. */
export async function untouchedThread<S extends BaseState>(
  deps: RunDependencies<S>,
  threadId: string,
  runId: string,
): Promise<RunResult<S>> {
  const snapshot = await loadThread(deps.checkpointer, threadId);
  const values = snapshot?.checkpoint.values ?? structuredClone(deps.graph.initialState);
  return {
    status: "stopped",
    state: { ...values, messages: snapshot?.messages ?? [] } as unknown as S,
    interrupts: [],
    threadId,
    runId,
    version: snapshot?.checkpoint.version ?? 0,
    step: snapshot?.checkpoint.step ?? 0,
    currentNode: snapshot?.checkpoint.currentNode ?? null,
  };
}
