/**
 * The SQLSTATE of a write whose transcript change does not fit its parent (an appended id
 * already in it, a replaced or removed id not in it, a parent not kept): the step function
 * raises it, so nothing of the write is applied, and the checkpointer reports its message.
 */
export const TRANSCRIPT_REFUSED = "TXG01";

/**
 * A child version's transcript from its parent's, in the step's transaction, checked against
 * the parent's message ids: `childRanges` of `@tenxgraph/core/storage` in PL/pgSQL (the step
 * must stay one statement), with the same checks as the in-memory store. The conformance suite
 * holds both to the same transcripts. The parent is `p_parent_ranges`, or the prefix
 * `[0, p_parent_count)` when `NULL`; the write's new rows start at `p_next_seq`, the replacing
 * ones first (in their order), then the appended ones. Returns the child's ranges (`NULL` for a
 * prefix) and length.
 *
 * Appending alone, the common case, costs one probe of the message-id index (is an appended id
 * already in the parent?) and a change to the last range; only an edit reads the parent's rows.
 */
export const CHILD_TRANSCRIPT_FUNCTION = `
CREATE FUNCTION tenxgraph_child_transcript(
  p_thread_id text, p_parent bigint, p_parent_ranges jsonb, p_parent_count integer,
  p_next_seq integer, p_message_ids text[], p_replaced_ids text[], p_removed_ids text[],
  OUT child_ranges jsonb, OUT child_count integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  added integer := coalesce(cardinality(p_message_ids), 0);
  first_seq integer := p_next_seq + coalesce(cardinality(p_replaced_ids), 0);
  editing boolean := coalesce(cardinality(p_replaced_ids), 0) > 0
                     OR coalesce(cardinality(p_removed_ids), 0) > 0;
  ranges jsonb;
  parent_seqs integer[];
  parent_ids text[];
  child_seqs integer[];
  bad text;
BEGIN
  IF NOT editing THEN
    IF added > 0 AND p_parent_count > 0 THEN
      SELECT m.message_id INTO bad FROM messages m
      WHERE m.thread_id = p_thread_id AND m.message_id = ANY (p_message_ids)
        AND CASE WHEN p_parent_ranges IS NULL THEN m.seq < p_parent_count
                 ELSE EXISTS (SELECT 1 FROM jsonb_array_elements(p_parent_ranges) AS r(range)
                              WHERE m.seq >= (r.range->>0)::integer
                                AND m.seq < (r.range->>1)::integer) END
      LIMIT 1;
      IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'message ''%'' is already in the append-only transcript of ''%''',
          bad, p_thread_id USING ERRCODE = '${TRANSCRIPT_REFUSED}';
      END IF;
    END IF;
    ranges := CASE WHEN p_parent_ranges IS NOT NULL THEN p_parent_ranges
                   WHEN p_parent_count > 0 THEN jsonb_build_array(jsonb_build_array(0, p_parent_count))
                   ELSE '[]' END;
    -- The appended rows extend the last range when they follow it, as they do for a thread
    -- that only appends: its transcript stays the one prefix range.
    IF added > 0 AND (ranges->-1->>1)::integer = first_seq THEN
      ranges := jsonb_set(ranges, ARRAY[(jsonb_array_length(ranges) - 1)::text, '1'],
                          to_jsonb(first_seq + added));
    ELSIF added > 0 THEN
      ranges := ranges || jsonb_build_array(jsonb_build_array(first_seq, first_seq + added));
    END IF;
    child_count := p_parent_count + added;
  ELSE
    SELECT array_agg(t.seq ORDER BY t.pos), coalesce(array_agg(m.message_id ORDER BY t.pos), '{}')
    INTO parent_seqs, parent_ids
    FROM tenxgraph_transcript_seqs(p_parent_ranges, p_parent_count) t
    JOIN messages m ON m.thread_id = p_thread_id AND m.seq = t.seq;
    SELECT x INTO bad FROM unnest(p_message_ids) AS x WHERE x = ANY (parent_ids) LIMIT 1;
    IF bad IS NOT NULL THEN
      RAISE EXCEPTION 'message ''%'' is already in the append-only transcript of ''%''',
        bad, p_thread_id USING ERRCODE = '${TRANSCRIPT_REFUSED}';
    END IF;
    SELECT x INTO bad FROM unnest(p_replaced_ids) AS x WHERE NOT x = ANY (parent_ids) LIMIT 1;
    IF bad IS NOT NULL THEN
      RAISE EXCEPTION 'cannot replace message ''%'': it is not in the transcript of version % of ''%''',
        bad, p_parent, p_thread_id USING ERRCODE = '${TRANSCRIPT_REFUSED}';
    END IF;
    SELECT x INTO bad FROM unnest(p_removed_ids) AS x WHERE NOT x = ANY (parent_ids) LIMIT 1;
    IF bad IS NOT NULL THEN
      RAISE EXCEPTION 'cannot remove message ''%'': it is not in the transcript of version % of ''%''',
        bad, p_parent, p_thread_id USING ERRCODE = '${TRANSCRIPT_REFUSED}';
    END IF;
    -- The parent's rows in order, without the removed ones, each replaced one swapped for its
    -- new row (the i-th replacing message is row p_next_seq + i - 1), then the appended rows.
    SELECT coalesce(array_agg(coalesce(p_next_seq + r.ord::integer - 1, s.seq) ORDER BY s.pos), '{}')
    INTO child_seqs
    FROM unnest(parent_seqs, parent_ids) WITH ORDINALITY AS s(seq, id, pos)
    LEFT JOIN unnest(p_replaced_ids) WITH ORDINALITY AS r(id, ord) ON r.id = s.id
    WHERE NOT s.id = ANY (p_removed_ids);
    child_seqs := child_seqs || ARRAY(SELECT generate_series(first_seq, first_seq + added - 1));
    ranges := tenxgraph_seq_ranges(child_seqs);
    child_count := cardinality(child_seqs);
  END IF;
  -- A prefix (or nothing) is kept as NULL: readers then bound the rows by the count alone.
  IF jsonb_array_length(ranges) = 0
     OR (jsonb_array_length(ranges) = 1 AND (ranges->0->>0)::integer = 0) THEN
    child_ranges := NULL;
  ELSE
    child_ranges := ranges;
  END IF;
END
$$`;
