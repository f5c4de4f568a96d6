/**
 * Migration 5: every write names the life of the thread it was computed from (the
 * `incarnation` of `@tenxgraph/core`'s checkpoint, minted by the write that creates the thread),
 * and `tenxgraph_put_checkpoint` compares it with the version. Before, a run still going on a
 * deleted thread could write into a new thread of the same id once that one reached the
 * version the run had read.
 *
 * The column is `incarnation_id`, beside migration 2's `incarnation`: that one is the server's
 * sequence number, which orders lives for the Redis cache; this one is the writer's id of the
 * life, which only has to differ. A thread made before keeps the empty id, which its own runs
 * read and write back.
 */
export const INCARNATION_ID_MIGRATION = [
  `ALTER TABLE threads ADD COLUMN incarnation_id text NOT NULL DEFAULT ''`,
  `DROP FUNCTION tenxgraph_put_checkpoint(text, text, bigint, integer, text, text, jsonb, jsonb,
    jsonb, text[], jsonb)`,
  `
CREATE FUNCTION tenxgraph_put_checkpoint(
  p_thread_id text, p_incarnation_id text, p_user_id text, p_expected bigint, p_step integer,
  p_current_node text, p_status text, p_values jsonb, p_interrupts jsonb, p_resume_answers jsonb,
  p_message_ids text[], p_messages jsonb,
  OUT new_version bigint, OUT found_version bigint, OUT message_count integer,
  OUT thread_user_id text, OUT updated_at timestamptz, OUT thread_incarnation bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  added integer := coalesce(cardinality(p_message_ids), 0);
  first_seq integer;
  found_life text;
BEGIN
  IF p_expected = 0 THEN
    INSERT INTO threads (thread_id, incarnation_id, user_id, status, version, message_count)
    VALUES (p_thread_id, p_incarnation_id, p_user_id, p_status, 1, added)
    ON CONFLICT ON CONSTRAINT threads_pkey DO NOTHING
    RETURNING threads.incarnation INTO thread_incarnation;
    IF NOT FOUND THEN
      SELECT t.version INTO found_version FROM threads t WHERE t.thread_id = p_thread_id;
      RETURN;
    END IF;
    first_seq := 0;
    thread_user_id := p_user_id;
  ELSE
    SELECT t.version, t.message_count, t.incarnation_id INTO found_version, first_seq, found_life
    FROM threads t WHERE t.thread_id = p_thread_id FOR UPDATE;
    IF found_version IS DISTINCT FROM p_expected OR found_life IS DISTINCT FROM p_incarnation_id
    THEN
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
$$`,
];
