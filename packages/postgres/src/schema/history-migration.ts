import { PUT_CHECKPOINT_WITH_HISTORY_FUNCTION } from "./put-checkpoint-history-function.js";
import { CHILD_TRANSCRIPT_FUNCTION } from "./child-transcript-function.js";

/**
 * A version's transcript as ordered seqs, from how `states` keeps it: `p_ranges`, the
 * `SeqRanges` of `@tenxgraph/core/storage` as JSON (`[[start, end), ...]` in transcript order),
 * or `NULL` for the prefix `[0, p_count)`. `pos` is the message's index in the transcript. Every
 * reader and the step function expand ranges through this one function (as `rangeSeqs` does).
 */
const TRANSCRIPT_SEQS_FUNCTION = `
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

/**
 * Ranges listing `p_seqs` in their order, contiguous runs merged (as `seqsToRanges` does): a
 * run starts wherever a seq is not its predecessor plus one.
 */
const SEQ_RANGES_FUNCTION = `
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

/**
 * Migration 7: history. Every version keeps its node, run, parent and transcript; a write may
 * fork an earlier version, replace or remove messages, and old versions can be pruned.
 *
 * - `messages` stays append-only, but a message id may now be in several rows (an edit writes a
 *   new row with the same id; a fork may send again a message of the abandoned branch), so its
 *   key becomes `(thread_id, seq)` (in place of the unique constraint on it) and the id gets
 *   a plain index, which the step probes for an appended id already in the transcript.
 * - `threads.next_seq` is the seq of the next row; `message_count` stays the head transcript's
 *   length. The two are equal exactly when the head holds every row in order, the append-only
 *   case, which the step then handles without reading any `states` row.
 * - `states` gets `parent_version`, `node`, `run_id`, `message_count` (that version's transcript
 *   length) and `message_ranges` (its rows as ranges; `NULL` for the prefix
 *   `[0, message_count)`, so an append-only step stores no ranges).
 * - `threads.delete_after`, indexed for the sweep of `deleteExpiredThreads`. Steps never change
 *   it, so their update of the thread row stays HOT (migration 6).
 *
 * History starts at the upgrade: each thread's head version gets its transcript (all its rows)
 * and its parent (the version before); older versions keep `message_count` `NULL`, since their
 * transcripts were never recorded, and readers skip them as if pruned.
 */
export const HISTORY_MIGRATION: readonly string[] = [
  `ALTER TABLE messages DROP CONSTRAINT messages_pkey,
    DROP CONSTRAINT messages_thread_id_seq_key, ADD PRIMARY KEY (thread_id, seq)`,
  `CREATE INDEX messages_by_id ON messages (thread_id, message_id)`,
  `ALTER TABLE threads ADD COLUMN next_seq integer NOT NULL DEFAULT 0,
    ADD COLUMN delete_after timestamptz`,
  `UPDATE threads SET next_seq = message_count`,
  `CREATE INDEX threads_by_delete_after ON threads (delete_after)
    WHERE delete_after IS NOT NULL`,
  `ALTER TABLE states ADD COLUMN parent_version bigint, ADD COLUMN node text,
    ADD COLUMN run_id text, ADD COLUMN message_count integer, ADD COLUMN message_ranges jsonb`,
  `UPDATE states s
   SET message_count = t.message_count, parent_version = nullif(s.version - 1, 0)
   FROM threads t
   WHERE t.thread_id = s.thread_id AND t.version = s.version`,
  TRANSCRIPT_SEQS_FUNCTION,
  SEQ_RANGES_FUNCTION,
  CHILD_TRANSCRIPT_FUNCTION,
  `DROP FUNCTION tenxgraph_put_checkpoint(text, text, text, bigint, integer, text, text, jsonb,
    jsonb, jsonb, text[], jsonb, jsonb, jsonb)`,
  PUT_CHECKPOINT_WITH_HISTORY_FUNCTION,
];
