/**
 * A version's transcript as a store keeps it: the rows it holds, named by their place in the
 * thread's append-only message table (`seq`), as ranges `[start, end)` in transcript order.
 * A thread that only ever appended has one range `[0, n)` per version, however long; an edit,
 * a removal or a fork adds a few. Every store computes them with these functions, so they
 * agree on what a version holds.
 */
export type SeqRanges = readonly (readonly [start: number, end: number])[];

/** The message rows of the transcript, in order: `[0, count)`. */
export function prefixRanges(count: number): SeqRanges {
  return count > 0 ? [[0, count]] : [];
}

/** How many messages the transcript holds. */
export function rangesLength(ranges: SeqRanges): number {
  return ranges.reduce((total, [start, end]) => total + (end - start), 0);
}

/** The seqs of the transcript's messages `offset .. offset + limit` (`null`: to the end), as ranges. */
export function sliceRanges(ranges: SeqRanges, offset: number, limit: number | null): SeqRanges {
  const sliced: [number, number][] = [];
  let skip = offset;
  let left = limit ?? Infinity;
  for (const [start, end] of ranges) {
    if (left <= 0) break;
    const length = end - start;
    if (skip >= length) {
      skip -= length;
      continue;
    }
    const from = start + skip;
    const to = Math.min(end, from + left);
    sliced.push([from, to]);
    left -= to - from;
    skip = 0;
  }
  return sliced;
}

/** Every seq the transcript holds, in order. */
export function rangeSeqs(ranges: SeqRanges): number[] {
  return ranges.flatMap(([start, end]) => Array.from({ length: end - start }, (_, i) => start + i));
}

/** Ranges listing `seqs` in their order, contiguous runs merged. */
export function seqsToRanges(seqs: readonly number[]): SeqRanges {
  const ranges: [number, number][] = [];
  for (const seq of seqs) {
    const last = ranges.at(-1);
    if (last && last[1] === seq) last[1] = seq + 1;
    else ranges.push([seq, seq + 1]);
  }
  return ranges;
}

/**
 * A child version's transcript from its parent's: the rows of `removed` dropped, each row of
 * `replaced` swapped for its new row in the same place, then `appended` new rows at the end
 * (`[first, first + count)`). A thread that only appends stays one range.
 */
export function childRanges(
  parent: SeqRanges,
  change: {
    removed: ReadonlySet<number>;
    replaced: ReadonlyMap<number, number>;
    appended: { first: number; count: number };
  },
): SeqRanges {
  const { removed, replaced, appended } = change;
  const unchanged = removed.size === 0 && replaced.size === 0;
  const kept = unchanged
    ? parent.map(([start, end]) => [start, end] as [number, number])
    : (seqsToRanges(
        rangeSeqs(parent)
          .filter((seq) => !removed.has(seq))
          .map((seq) => replaced.get(seq) ?? seq),
      ) as [number, number][]);
  if (appended.count === 0) return kept;
  const last = kept.at(-1);
  const end = appended.first + appended.count;
  if (last && last[1] === appended.first) last[1] = end;
  else kept.push([appended.first, end]);
  return kept;
}

/** True when `ranges` is the plain prefix `[0, n)` (or empty): stores may keep such ranges as a count. */
export function isPrefix(ranges: SeqRanges): boolean {
  return ranges.length === 0 || (ranges.length === 1 && ranges[0]![0] === 0);
}

/** The union of the seqs of several transcripts: what pruning must keep. */
export function seqsHeldByAny(transcripts: readonly SeqRanges[]): Set<number> {
  const held = new Set<number>();
  for (const ranges of transcripts) for (const seq of rangeSeqs(ranges)) held.add(seq);
  return held;
}
