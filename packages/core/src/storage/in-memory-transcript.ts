import { StorageError } from "../errors/errors.js";
import type { Message } from "../messages/message.js";
import type { StoreWrite } from "./store-write.js";
import { rangeSeqs, type SeqRanges } from "./transcript-ranges.js";

/**
 * Checks a write's transcript change against its parent's message ids: an appended id must be
 * new to it, a replaced or removed one must be in it. Returns the rows it removes.
 */
export function transcriptChange(
  threadId: string,
  parentIds: ReadonlyMap<string, number>,
  write: StoreWrite,
): { removedSeqs: Set<number>; plainAppend: boolean } {
  const fail = (why: string) => new StorageError("putCheckpoint", new Error(why));
  for (const { id } of write.newMessages) {
    if (parentIds.has(id)) {
      throw fail(`message '${id}' is already in the append-only transcript of '${threadId}'`);
    }
  }
  const seqOf = (id: string, change: string) => {
    const seq = parentIds.get(id);
    if (seq === undefined) {
      throw fail(
        `cannot ${change} message '${id}': it is not in the transcript of version ${write.parentVersion} of '${threadId}'`,
      );
    }
    return seq;
  };
  for (const { id } of write.replacedMessages) seqOf(id, "replace");
  const removedSeqs = new Set(write.removedMessageIds.map((id) => seqOf(id, "remove")));
  const plainAppend = write.replacedMessages.length === 0 && removedSeqs.size === 0;
  return { removedSeqs, plainAppend };
}

/** The ids of a transcript's messages, with their rows. */
export function idsOf(
  rows: ReadonlyMap<number, Message>,
  transcript: SeqRanges,
): Map<string, number> {
  return new Map(rangeSeqs(transcript).map((seq) => [rows.get(seq)!.id, seq]));
}

/**
 * `ids` grown by the rows appended from `first`, in place: they are the parent's, which no
 * later write reads again (it was the head, now moved on, or read for this write alone).
 */
export function appendIds(
  ids: Map<string, number>,
  appended: readonly Message[],
  first: number,
): Map<string, number> {
  appended.forEach((message, i) => ids.set(message.id, first + i));
  return ids;
}
