/**
 * Ranges listing `p_seqs` in their order, contiguous runs merged (as `seqsToRanges` does): a
 * run starts wherever a seq is not its predecessor plus one.
 */
export const SEQ_RANGES_FUNCTION = `
CREATE FUNCTION tenxgraph_seq_ranges(p_seqs integer[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_array(first_seq, last_seq + 1) ORDER BY run), '[]')
  FROM (
    SELECT run, min(seq) AS first_seq, max(seq) AS last_seq
    FROM (
      SELECT seq, sum(starts) OVER (ORDER BY ord) AS run
      FROM (
        SELECT u.seq, u.ord,
               CASE WHEN u.seq = lag(u.seq) OVER (ORDER BY u.ord) + 1 THEN 0 ELSE 1 END AS starts
        FROM unnest(p_seqs) WITH ORDINALITY AS u(seq, ord)
      ) marked
    ) numbered
    GROUP BY run
  ) runs
$$`;
