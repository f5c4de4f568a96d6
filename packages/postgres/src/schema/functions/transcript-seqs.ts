/**
 * A version's transcript as ordered seqs, from how `states` keeps it: `p_ranges`, the
 * `SeqRanges` of `@tenxgraph/core/storage` as JSON (`[[start, end), ...]` in transcript order),
 * or `NULL` for the prefix `[0, p_count)`. `pos` is the message's index in the transcript. Every
 * reader and the step function expand ranges through this one function (as `rangeSeqs` does).
 */
export const TRANSCRIPT_SEQS_FUNCTION = `
CREATE FUNCTION tenxgraph_transcript_seqs(p_ranges jsonb, p_count integer)
RETURNS TABLE (pos bigint, seq integer)
LANGUAGE sql IMMUTABLE AS $$
  SELECT s.seq::bigint, s.seq
  FROM generate_series(0, p_count - 1) AS s(seq)
  WHERE p_ranges IS NULL
  UNION ALL
  SELECT row_number() OVER (ORDER BY r.ord, s.seq) - 1, s.seq
  FROM jsonb_array_elements(p_ranges) WITH ORDINALITY AS r(range, ord),
       generate_series((r.range->>0)::integer, (r.range->>1)::integer - 1) AS s(seq)
  WHERE p_ranges IS NOT NULL
$$`;
