/**
 * `tenxgraph_put_checkpoint` as migration 2 defines it: version 1's step (lock the thread row,
 * compare the version, insert the state row at `version + 1` and the new messages, in the
 * caller's single-statement transaction) that also returns the thread's incarnation, so the
 * writer can tag its Redis copy with it. Returns the new version, or `NULL` with the version
 * found (`NULL` too when there is no thread) when the compare fails.
 *
 * Version 1's text stays in migrations.ts as published: a schema at version 1 is migrated by
 * dropping that function and creating this one.
 */
export const PUT_CHECKPOINT_WITH_INCARNATION = `
CREATE FUNCTION tenxgraph_put_checkpoint(
  p_thread_id text, p_user_id text, p_expected bigint, p_step integer, p_current_node text,
  p_status text, p_values jsonb, p_interrupts jsonb, p_resume_answers jsonb,
  p_message_ids text[], p_messages jsonb,
  OUT new_version bigint, OUT found_version bigint, OUT message_count integer,
  OUT thread_user_id text, OUT updated_at timestamptz, OUT thread_incarnation bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  added integer := coalesce(cardinality(p_message_ids), 0);
  first_seq integer;
BEGIN
  IF p_expected = 0 THEN
    INSERT INTO threads (thread_id, user_id, status, version, message_count)
    VALUES (p_thread_id, p_user_id, p_status, 1, added)
    ON CONFLICT ON CONSTRAINT threads_pkey DO NOTHING
    RETURNING threads.incarnation INTO thread_incarnation;
    IF NOT FOUND THEN
      SELECT t.version INTO found_version FROM threads t WHERE t.thread_id = p_thread_id;
      RETURN;
    END IF;
    first_seq := 0;
    thread_user_id := p_user_id;
  ELSE
    SELECT t.version, t.message_count INTO found_version, first_seq
    FROM threads t WHERE t.thread_id = p_thread_id FOR UPDATE;
    IF found_version IS DISTINCT FROM p_expected THEN
      RETURN;
    END IF;
    UPDATE threads
    SET user_id = coalesce(p_user_id, threads.user_id), status = p_status,
        version = p_expected + 1, message_count = first_seq + added,
        write_seq = nextval('threads_write_seq'), updated_at = now()
    WHERE thread_id = p_thread_id
    RETURNING threads.user_id, threads.incarnation INTO thread_user_id, thread_incarnation;
  END IF;
  INSERT INTO states (thread_id, version, step, current_node, status, "values", interrupts,
                      resume_answers)
  VALUES (p_thread_id, p_expected + 1, p_step, p_current_node, p_status, p_values, p_interrupts,
          p_resume_answers);
  IF added > 0 THEN
    INSERT INTO messages (thread_id, message_id, seq, body)
    SELECT p_thread_id, m.id, first_seq + (m.ord - 1)::integer, b.body
    FROM unnest(p_message_ids) WITH ORDINALITY AS m(id, ord)
    JOIN jsonb_array_elements(p_messages) WITH ORDINALITY AS b(body, ord) ON b.ord = m.ord;
  END IF;
  new_version := p_expected + 1;
  message_count := first_seq + added;
  updated_at := now();
END
$$`;
