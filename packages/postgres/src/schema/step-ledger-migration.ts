/**
 * The first completion of a step write whose claim is no longer held: its entry is missing, not
 * `started`, or at another attempt (`NULL`s when every claim is held). The entries are locked
 * first, in key order as claims lock them, so none can change between this check and the
 * write that follows in the same transaction.
 */
const LOST_COMPLETION_FUNCTION = `
CREATE FUNCTION tenxgraph_lost_completion(p_thread_id text, p_completions jsonb,
  OUT lost_key text, OUT lost_attempt integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM tool_executions t
  WHERE t.thread_id = p_thread_id
    AND t.call_key IN (SELECT c->>'key' FROM jsonb_array_elements(p_completions) AS c)
  ORDER BY t.call_key
  FOR UPDATE;
  SELECT c.v->>'key', (c.v->>'attempt')::integer INTO lost_key, lost_attempt
  FROM jsonb_array_elements(p_completions) WITH ORDINALITY AS c(v, ord)
  WHERE NOT EXISTS (
    SELECT 1 FROM tool_executions t
    WHERE t.thread_id = p_thread_id AND t.call_key = c.v->>'key' AND t.status = 'started'
      AND t.attempt = (c.v->>'attempt')::integer)
  ORDER BY c.ord
  LIMIT 1;
END
$$`;

/**
 * The claims of a step write: each inserted as attempt 1 where its key has no entry, with its
 * lease on the server's clock and the claim order of `tenxgraph_claim_calls` (one batch, the
 * claim's place in it), in key order so two claimers cannot deadlock. Returns one outcome per
 * claim, in the claims' order: `{"won": true}`, or `{"won": false, "entry": {...}}` with the
 * entry's columns as `tenxgraph_claim_calls` returns them.
 */
const CLAIM_ABSENT_CALLS_FUNCTION = `
CREATE FUNCTION tenxgraph_claim_absent_calls(p_thread_id text, p_claims jsonb)
RETURNS jsonb
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  batch bigint := nextval('tool_claim_batches');
  won_keys text[];
  outcomes jsonb;
BEGIN
  WITH inserted AS (
    INSERT INTO tool_executions AS t (thread_id, call_key, claim_batch, claim_index, tool_name,
                                      status, attempt, owner_run_id, started_at, heartbeat_at,
                                      lease_expires_at)
    SELECT p_thread_id, c.v->>'key', batch, (c.ord - 1)::integer, c.v->>'toolName', 'started',
           1, c.v->>'ownerRunId', now(), now(),
           now() + (c.v->>'leaseMs')::double precision * interval '1 millisecond'
    FROM jsonb_array_elements(p_claims) WITH ORDINALITY AS c(v, ord)
    ORDER BY c.v->>'key'
    ON CONFLICT ON CONSTRAINT tool_executions_pkey DO NOTHING
    RETURNING t.call_key
  )
  SELECT coalesce(array_agg(i.call_key), '{}') INTO won_keys FROM inserted i;
  -- A statement of its own, so a snapshot of its own: a lost claim reports the entry that won,
  -- even one a concurrent claimer committed while the insert waited for it.
  SELECT jsonb_agg(
           CASE WHEN e.call_key IS NULL THEN jsonb_build_object('won', true)
                ELSE jsonb_build_object('won', false, 'entry', to_jsonb(e)) END
           ORDER BY c.ord)
  INTO outcomes
  FROM jsonb_array_elements(p_claims) WITH ORDINALITY AS c(v, ord)
  LEFT JOIN LATERAL (
    SELECT t.call_key, t.tool_name, t.status, t.attempt, t.owner_run_id, t.started_at,
           t.heartbeat_at, t.lease_expires_at,
           extract(epoch FROM t.lease_expires_at - clock_timestamp()) * 1000
             AS lease_expires_in_ms,
           t.result, t.completed_at
    FROM tool_executions t
    WHERE t.thread_id = p_thread_id AND t.call_key = c.v->>'key'
      AND NOT t.call_key = ANY (won_keys)
  ) e ON true;
  RETURN outcomes;
END
$$`;

/**
 * One step with its ledger writes, in the caller's single-statement transaction, in this order:
 *
 * 1. lock the thread row and compare version and incarnation (`NULL` `new_version`, with the
 *    version found, when they differ);
 * 2. check every completion's fence (`lost_key`/`lost_attempt` name the first lost one, and
 *    nothing is written);
 * 3. update the thread, insert the state row and the messages (as migration 5's function);
 * 4. complete the entries, with the columns `completeCall` sets;
 * 5. insert the claims where absent (`claims`: one outcome per claim, `NULL` without claims).
 *
 * The thread row is locked `FOR NO KEY UPDATE`, the lock its update takes anyway: unlike
 * `FOR UPDATE` it lets a concurrent claim's foreign-key check (`FOR KEY SHARE`) through, so a
 * claimer holding an entry this write fences on cannot wait for the thread row while this write
 * waits for the entry.
 *
 * `write_seq` (indexed, and the order of `listThreads`) moves only when the status changes or
 * the thread is created. The other columns a step changes (`status`, `version`,
 * `message_count`, `updated_at`) are not indexed, and `user_id` (indexed) is written back
 * unchanged unless the write sets another, so the update is HOT: no index entry per step.
 */
const PUT_CHECKPOINT_WITH_LEDGER_FUNCTION = `
CREATE FUNCTION tenxgraph_put_checkpoint(
  p_thread_id text, p_incarnation_id text, p_user_id text, p_expected bigint, p_step integer,
  p_current_node text, p_status text, p_values jsonb, p_interrupts jsonb, p_resume_answers jsonb,
  p_message_ids text[], p_messages jsonb, p_completions jsonb, p_claims jsonb,
  OUT new_version bigint, OUT found_version bigint, OUT message_count integer,
  OUT thread_user_id text, OUT updated_at timestamptz, OUT thread_incarnation bigint,
  OUT lost_key text, OUT lost_attempt integer, OUT claims jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  added integer := coalesce(cardinality(p_message_ids), 0);
  completing boolean := jsonb_array_length(p_completions) > 0;
  first_seq integer;
  found_life text;
  found_status text;
BEGIN
  IF p_expected = 0 THEN
    IF completing THEN
      -- A thread that does not exist has no entries, so its completions have all lost their
      -- claims: refused before the insert, which would be this write's first change.
      SELECT t.version INTO found_version FROM threads t WHERE t.thread_id = p_thread_id;
      IF NOT FOUND THEN
        lost_key := p_completions->0->>'key';
        lost_attempt := (p_completions->0->>'attempt')::integer;
      END IF;
      RETURN;
    END IF;
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
    SELECT t.version, t.message_count, t.incarnation_id, t.status
    INTO found_version, first_seq, found_life, found_status
    FROM threads t WHERE t.thread_id = p_thread_id FOR NO KEY UPDATE;
    IF found_version IS DISTINCT FROM p_expected OR found_life IS DISTINCT FROM p_incarnation_id
    THEN
      RETURN;
    END IF;
    IF completing THEN
      SELECT f.lost_key, f.lost_attempt INTO lost_key, lost_attempt
      FROM tenxgraph_lost_completion(p_thread_id, p_completions) f;
      IF lost_key IS NOT NULL THEN
        RETURN;
      END IF;
    END IF;
    UPDATE threads
    SET user_id = coalesce(p_user_id, threads.user_id), status = p_status,
        version = p_expected + 1, message_count = first_seq + added,
        write_seq = CASE WHEN found_status = p_status THEN threads.write_seq
                         ELSE nextval('threads_write_seq') END,
        updated_at = now()
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
  IF completing THEN
    UPDATE tool_executions t
    SET status = 'completed', result = c.v->'result', completed_at = now(), heartbeat_at = NULL,
        lease_expires_at = NULL
    FROM jsonb_array_elements(p_completions) AS c(v)
    WHERE t.thread_id = p_thread_id AND t.call_key = c.v->>'key'
      AND t.attempt = (c.v->>'attempt')::integer;
  END IF;
  IF jsonb_array_length(p_claims) > 0 THEN
    claims := tenxgraph_claim_absent_calls(p_thread_id, p_claims);
  END IF;
  new_version := p_expected + 1;
  message_count := first_seq + added;
  updated_at := now();
END
$$`;

/**
 * Migration 6 (ledger protocol v2, see `model/README.md`): a step's write carries the tool-ledger
 * writes that commit with it (the step's results, fenced on their attempts, and the next node's
 * claims), still in one statement and one round trip; and a step's update of its thread row is
 * HOT (heap-only), so a step no longer adds an entry to each of the thread table's indexes.
 *
 * The function keeps its name (monitoring and tests look for it) and takes two more arguments,
 * so migration 5's is dropped first. Fill factor 80 keeps a fifth of each page free for the new
 * versions of its rows: HOT needs the new version on the old one's page, and a page holds a few
 * dozen threads, each stepping many times between prunings. It applies to pages filled from now
 * on; pages already full gain room as their dead versions are pruned.
 */
export const STEP_LEDGER_MIGRATION: readonly string[] = [
  `ALTER TABLE threads SET (fillfactor = 80)`,
  `DROP FUNCTION tenxgraph_put_checkpoint(text, text, text, bigint, integer, text, text, jsonb,
    jsonb, jsonb, text[], jsonb)`,
  LOST_COMPLETION_FUNCTION,
  CLAIM_ABSENT_CALLS_FUNCTION,
  PUT_CHECKPOINT_WITH_LEDGER_FUNCTION,
];
