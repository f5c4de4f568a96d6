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
 *   `[0, message_count)`, so an append-only step stores no ranges), and `frontier` (the
 *   version's `Frontier`; `NULL` for the plain chain, as every earlier version reads; moved
 *   into `record` by migration 10).
 * - the step function finds the parent's transcript and computes the child's
 *   (`tenxgraph_child_transcript`, with `tenxgraph_transcript_seqs` and `tenxgraph_seq_ranges`,
 *   in functions/).
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
    ADD COLUMN run_id text, ADD COLUMN message_count integer, ADD COLUMN message_ranges jsonb,
    ADD COLUMN frontier jsonb`,
  `UPDATE states s
   SET message_count = t.message_count, parent_version = nullif(s.version - 1, 0)
   FROM threads t
   WHERE t.thread_id = s.thread_id AND t.version = s.version`,
];
