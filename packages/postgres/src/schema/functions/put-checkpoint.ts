import { TRANSCRIPT_REFUSED } from "./child-transcript.js";

/**
 * The SQLSTATE of a write that names a user other than the thread's owner: the step function
 * raises it, so nothing of the write is applied, and the checkpointer reports
 * `ThreadOwnerError` (`STORAGE_OWNER_001`).
 */
export const OWNER_REFUSED = "TXG02";

/**
 * The SQLSTATE of a write carrying the result of a call whose claim it no longer holds (the
 * entry is missing, not `started`, or at another attempt: another execution took the call
 * over). The step function raises it, so nothing of the write is applied, with the first such
 * call as `{"key", "attempt"}` in the error's detail; the checkpointer reports
 * `ClaimLostError` (`TOOL_CONFLICT_002`).
 */
export const CLAIM_LOST = "TXG03";

/**
 * One step with its ledger writes and its place in the thread's history, in the caller's
 * single-statement transaction (so still one round trip and one commit), in this order:
 *
 * 1. lock the thread row and compare version and incarnation (`NULL` `new_version`, with the
 *    version found, when they differ), then refuse a write naming a user other than the
 *    thread's owner (`OWNER_REFUSED`: after the version compare, so a stale write is still
 *    reported as stale; a write without a user keeps the owner);
 * 2. complete the entries (with the columns `completeCall` sets), fenced by the update's own
 *    `WHERE`: only an entry still `started` at the completion's attempt is updated, and a
 *    completion the update did not return raises `CLAIM_LOST` (naming the first such, in the
 *    completions' order), which undoes the statement. The update's row locks hold the entries
 *    until the commit, so no claimer can take one over in between;
 * 3. find the parent's transcript: the head's, read from the thread row alone while the head
 *    holds every row in order (`message_count = next_seq`), else from the parent's state row;
 *    a parent that is not kept, or was written before the store kept history, raises;
 * 4. compute the new transcript (`tenxgraph_child_transcript`, which raises on a change that
 *    does not fit the parent);
 * 5. update the thread, insert the state row (the runtime's record, `p_record`, kept whole) and
 *    the new message rows (replacing ones first);
 * 6. insert the claims where absent (`claims`: one outcome per claim, `NULL` without claims);
 * 7. with `p_keep_versions`, delete the state rows it pushes out of the newest that many.
 *
 * The common step, an append to a head that holds every row in order, reads nothing first: one
 * `UPDATE` of the thread row does 1 and 5's update, its `WHERE` being 1's compare, the owner
 * check and that the head is such a prefix. A write it does not match (stale, another owner, an
 * edit, a fork, a head that is no prefix) takes the steps one by one, so it is answered or
 * refused exactly as before. For the append, 3 and 4 are the one check
 * `tenxgraph_child_transcript` makes of an append to a prefix (no appended id is already in
 * it), made inline with its message, and the new transcript is the longer prefix.
 *
 * A raise in 2, 3 or 4 aborts the statement, so the write leaves nothing behind (an append's
 * update of the thread row included). The thread row is locked `FOR NO KEY UPDATE`, the lock
 * its update takes anyway: unlike `FOR UPDATE` it lets a concurrent claim's foreign-key check
 * (`FOR KEY SHARE`) through, so a claimer holding an entry this write completes cannot wait for
 * the thread row while this write waits for the entry. Either way the thread row is locked
 * before any entry, and the completions are taken in key order, the order claims lock entries
 * in. The update leaves every indexed column as it was unless the status changes (`write_seq`,
 * the order of `listThreads`, moves only then), so a step's update is HOT: no index entry per
 * step (see migration 6, which set the fill factor that leaves room for it).
 */
export const PUT_CHECKPOINT_FUNCTION = `
CREATE FUNCTION tenxgraph_put_checkpoint(
  p_thread_id text, p_incarnation_id text, p_user_id text, p_expected bigint, p_parent bigint,
  p_node text, p_run_id text, p_status text, p_record jsonb,
  p_message_ids text[], p_messages jsonb, p_replaced_ids text[], p_replaced jsonb,
  p_removed_ids text[], p_completions jsonb, p_claims jsonb, p_keep_versions integer,
  OUT new_version bigint, OUT found_version bigint, OUT message_count integer,
  OUT thread_user_id text, OUT updated_at timestamptz, OUT thread_incarnation bigint,
  OUT claims jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  added integer := coalesce(cardinality(p_message_ids), 0);
  replacing integer := coalesce(cardinality(p_replaced_ids), 0);
  completing boolean := jsonb_array_length(p_completions) > 0;
  -- threads.next_seq: the seq of this write's first new row.
  row_seq integer := 0;
  head_count integer := 0;
  parent_count integer := 0;
  parent_ranges jsonb;
  -- Whether the one update of an append to the head's prefix matched.
  appended boolean := false;
  -- The new version's transcript: its ranges (NULL for a prefix) and length.
  new_ranges jsonb;
  new_count integer;
  -- The new message rows' ids and bodies, replacing ones first.
  new_ids text[];
  new_bodies jsonb;
  found_life text;
  found_status text;
  found_owner text;
  lost_key text;
  lost_attempt integer;
  lost_ord bigint;
  bad text;
  -- A completion, and the places of the completions in key order.
  done jsonb;
  places integer[];
  place integer;
  child record;
BEGIN
  IF p_expected = 0 THEN
    IF completing THEN
      -- A thread that does not exist has no entries, so its completions have all lost their
      -- claims: refused before the insert, which would be this write's first change.
      SELECT t.version INTO found_version FROM threads t WHERE t.thread_id = p_thread_id;
      IF NOT FOUND THEN
        lost_key := p_completions->0->>'key';
        lost_attempt := (p_completions->0->>'attempt')::integer;
        RAISE EXCEPTION 'the claim of attempt % on call ''%'' (thread ''%'') is not held',
          lost_attempt, lost_key, p_thread_id USING ERRCODE = '${CLAIM_LOST}',
          DETAIL = jsonb_build_object('key', lost_key, 'attempt', lost_attempt)::text;
      END IF;
      RETURN;
    END IF;
    INSERT INTO threads (thread_id, incarnation_id, user_id, status, version, message_count,
                         next_seq)
    VALUES (p_thread_id, p_incarnation_id, p_user_id, p_status, 1, added, added)
    ON CONFLICT ON CONSTRAINT threads_pkey DO NOTHING
    RETURNING threads.incarnation INTO thread_incarnation;
    IF NOT FOUND THEN
      SELECT t.version INTO found_version FROM threads t WHERE t.thread_id = p_thread_id;
      RETURN;
    END IF;
    thread_user_id := p_user_id;
    -- Rows a delete by a release before migration 13 (which relied on the foreign keys'
    -- cascade) left behind: a new thread of the id starts with none.
    DELETE FROM states s WHERE s.thread_id = p_thread_id;
    DELETE FROM messages m WHERE m.thread_id = p_thread_id;
    -- The parent is the empty transcript: this only refuses a replace or a remove.
    child := tenxgraph_child_transcript(p_thread_id, 0, NULL, 0, 0, p_message_ids,
                                        p_replaced_ids, p_removed_ids);
    new_ranges := child.child_ranges;
    new_count := child.child_count;
  ELSE
    IF p_parent = p_expected AND replacing = 0 AND coalesce(cardinality(p_removed_ids), 0) = 0
    THEN
      UPDATE threads t
      SET user_id = coalesce(p_user_id, t.user_id), status = p_status,
          version = p_expected + 1, message_count = t.next_seq + added,
          next_seq = t.next_seq + added,
          write_seq = CASE WHEN t.status = p_status THEN t.write_seq
                           ELSE nextval('threads_write_seq') END,
          updated_at = now()
      WHERE t.thread_id = p_thread_id AND t.version = p_expected
        AND t.incarnation_id = p_incarnation_id AND t.message_count = t.next_seq
        AND (p_user_id IS NULL OR t.user_id = p_user_id)
      RETURNING t.user_id, t.incarnation, t.next_seq - added
      INTO thread_user_id, thread_incarnation, row_seq;
      appended := FOUND;
    END IF;
    IF NOT appended THEN
      SELECT t.version, t.message_count, t.next_seq, t.incarnation_id, t.status, t.user_id
      INTO found_version, head_count, row_seq, found_life, found_status, found_owner
      FROM threads t WHERE t.thread_id = p_thread_id FOR NO KEY UPDATE;
      IF found_version IS DISTINCT FROM p_expected
         OR found_life IS DISTINCT FROM p_incarnation_id THEN
        RETURN;
      END IF;
      IF p_user_id IS NOT NULL AND found_owner IS DISTINCT FROM p_user_id THEN
        RAISE EXCEPTION 'thread ''%'' belongs to another user: a write as user ''%'' cannot change its owner',
          p_thread_id, p_user_id USING ERRCODE = '${OWNER_REFUSED}';
      END IF;
    END IF;
    IF completing THEN
      -- One update per completion, in key order (the order claims lock entries in), each by
      -- the primary key: only the entry still started at the completion's attempt changes.
      -- The completions' places in the write, in that order: one needs no sort.
      IF jsonb_array_length(p_completions) = 1 THEN
        places := ARRAY[1];
      ELSE
        SELECT array_agg(c.ord::integer ORDER BY c.v->>'key', c.ord) INTO places
        FROM jsonb_array_elements(p_completions) WITH ORDINALITY AS c(v, ord);
      END IF;
      FOREACH place IN ARRAY places LOOP
        done := p_completions->(place - 1);
        UPDATE tool_executions t
        SET status = 'completed', result = done->'result', completed_at = now(),
            heartbeat_at = NULL, lease_expires_at = NULL
        WHERE t.thread_id = p_thread_id AND t.call_key = done->>'key'
          AND t.attempt = (done->>'attempt')::integer AND t.status = 'started';
        IF NOT FOUND AND (lost_ord IS NULL OR place < lost_ord) THEN
          lost_ord := place;
          lost_key := done->>'key';
          lost_attempt := (done->>'attempt')::integer;
        END IF;
      END LOOP;
      IF lost_key IS NOT NULL THEN
        RAISE EXCEPTION 'the claim of attempt % on call ''%'' (thread ''%'') is not held',
          lost_attempt, lost_key, p_thread_id USING ERRCODE = '${CLAIM_LOST}',
          DETAIL = jsonb_build_object('key', lost_key, 'attempt', lost_attempt)::text;
      END IF;
    END IF;
    IF appended THEN
      IF added > 0 AND row_seq > 0 THEN
        SELECT m.message_id INTO bad FROM messages m
        WHERE m.thread_id = p_thread_id AND m.message_id = ANY (p_message_ids)
          AND m.seq < row_seq
        LIMIT 1;
        IF bad IS NOT NULL THEN
          RAISE EXCEPTION 'message ''%'' is already in the append-only transcript of ''%''',
            bad, p_thread_id USING ERRCODE = '${TRANSCRIPT_REFUSED}';
        END IF;
      END IF;
      new_count := row_seq + added;
    ELSE
      IF p_parent = p_expected AND head_count = row_seq THEN
        -- The head holds every row in order: its transcript is the prefix [0, next_seq).
        parent_count := head_count;
      ELSE
        SELECT s.message_count, s.message_ranges INTO parent_count, parent_ranges
        FROM states s WHERE s.thread_id = p_thread_id AND s.version = p_parent;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'version % of thread ''%'' is not kept (pruned, or never written): it cannot be continued',
            p_parent, p_thread_id USING ERRCODE = '${TRANSCRIPT_REFUSED}';
        END IF;
        IF parent_count IS NULL THEN
          RAISE EXCEPTION 'version % of thread ''%'' was written before the store kept history (schema version 7), so its transcript is unknown: it cannot be continued',
            p_parent, p_thread_id USING ERRCODE = '${TRANSCRIPT_REFUSED}';
        END IF;
      END IF;
      -- A call in an expression, not a query over the function: no executor run, no tuplestore.
      child := tenxgraph_child_transcript(p_thread_id, p_parent, parent_ranges, parent_count,
                                          row_seq, p_message_ids, p_replaced_ids, p_removed_ids);
      new_ranges := child.child_ranges;
      new_count := child.child_count;
      UPDATE threads
      SET user_id = coalesce(p_user_id, threads.user_id), status = p_status,
          version = p_expected + 1, message_count = new_count,
          next_seq = row_seq + replacing + added,
          write_seq = CASE WHEN found_status = p_status THEN threads.write_seq
                           ELSE nextval('threads_write_seq') END,
          updated_at = now()
      WHERE thread_id = p_thread_id
      RETURNING threads.user_id, threads.incarnation INTO thread_user_id, thread_incarnation;
    END IF;
  END IF;
  IF replacing > 0 THEN
    new_ids := p_replaced_ids || p_message_ids;
    new_bodies := p_replaced || p_messages;
  ELSE
    new_ids := p_message_ids;
    new_bodies := p_messages;
  END IF;
  -- The state row, then the new message rows (each body with its id by position), as one
  -- statement.
  WITH state_row AS (
    INSERT INTO states (thread_id, version, parent_version, node, run_id, status, record,
                        message_count, message_ranges)
    VALUES (p_thread_id, p_expected + 1, nullif(p_parent, 0), p_node, p_run_id, p_status,
            p_record, new_count, new_ranges)
  )
  INSERT INTO messages (thread_id, message_id, seq, body)
  SELECT p_thread_id, new_ids[b.ord::integer], row_seq + (b.ord - 1)::integer, b.body
  FROM jsonb_array_elements(new_bodies) WITH ORDINALITY AS b(body, ord);
  IF jsonb_array_length(p_claims) > 0 THEN
    claims := tenxgraph_claim_absent_calls(p_thread_id, p_claims);
  END IF;
  IF p_keep_versions IS NOT NULL THEN
    DELETE FROM states s
    WHERE s.thread_id = p_thread_id AND s.version <= p_expected + 1 - p_keep_versions;
  END IF;
  new_version := p_expected + 1;
  message_count := new_count;
  updated_at := now();
END
$$`;
