import type { Message } from "@tenxgraph/core";
import type { MessagePage } from "@tenxgraph/core/storage";
import { sliceRanges } from "@tenxgraph/core/storage";
import { toTranscript } from "./rows.js";
import type { TranscriptRow } from "./rows.js";
import type { Statements } from "./sql.js";

/**
 * A page of the transcript of the head, or of `page.version`: the version's ranges sliced to
 * the page, then each range's rows read by place. A prefix transcript is the one range
 * `[0, message_count)`: rows past it may belong to an abandoned branch, so they are never read
 * by a plain `seq >= offset`. Run in one read transaction, so a pruning between the two reads
 * cannot take rows the page names. A version that is not kept, or from before the upgrade to
 * history, lists nothing.
 */
export function readMessages(sql: Statements, threadId: string, page: MessagePage): Message[] {
  const row = sql.selectTranscript.get({ threadId, version: page.version });
  const transcript = toTranscript(row as TranscriptRow | undefined);
  if (!transcript) return [];
  return sliceRanges(transcript, page.offset, page.limit).flatMap(([start, end]) => {
    const rows = sql.selectMessageRange.all(threadId, start, end) as { body_json: string }[];
    return rows.map((message) => JSON.parse(message.body_json) as Message);
  });
}
