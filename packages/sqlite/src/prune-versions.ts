import type { SeqRanges } from "@tenxgraph/core/storage";
import { seqsHeldByAny, seqsToRanges } from "@tenxgraph/core/storage";
import { toTranscript } from "./rows.js";
import type { TranscriptRow } from "./rows.js";
import type { Statements } from "./sql.js";

/**
 * Deletes every version of the thread but the newest `keepLast` that have a transcript, then
 * every message row no kept version holds; returns how many versions with a transcript it
 * deleted (rows from before the upgrade to history go too, as they are older, uncounted: no
 * reader lists them). Run in one transaction, so a reader sees the versions and their rows
 * leave together.
 */
export function pruneVersions(sql: Statements, threadId: string, keepLast: number): number {
  const oldestKept = sql.selectOldestKept.get(threadId, keepLast - 1) as
    { version: number } | undefined;
  let dropped = 0;
  if (oldestKept) {
    const gone = sql.deleteStatesUpTo.all(threadId, oldestKept.version - 1) as TranscriptRow[];
    dropped = gone.filter((row) => row.message_count !== null).length;
  }
  // Versions from before the upgrade are kept only with the upgrade's head (they are older),
  // whose transcript holds theirs (transcripts only grew then): skipping them loses nothing.
  const rows = sql.selectKeptTranscripts.all(threadId) as TranscriptRow[];
  const kept = rows.map((row) => toTranscript(row)!);
  for (const [start, end] of gapsBetween(kept)) sql.deleteMessageRange.run(threadId, start, end);
  return dropped;
}

/** The places no transcript holds, as ranges, the last one open-ended. */
function gapsBetween(transcripts: readonly SeqRanges[]): SeqRanges {
  const held = seqsToRanges([...seqsHeldByAny(transcripts)].sort((a, b) => a - b));
  const gaps: [number, number][] = [];
  let from = 0;
  for (const [start, end] of held) {
    if (start > from) gaps.push([from, start]);
    from = end;
  }
  gaps.push([from, Number.MAX_SAFE_INTEGER]);
  return gaps;
}
