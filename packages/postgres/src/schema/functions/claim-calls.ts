/**
 * A node's claims, in one statement. Keys are locked in sorted order, so two claimers of the
 * same keys cannot deadlock. Expected attempt 0 inserts (only one execution wins the insert);
 * n takes over an entry still at attempt n. A loser gets the entry that is there, read after the
 * winner committed. A takeover of a missing entry raises, and nothing of the batch is applied.
 * Each claim carries the claimant's lease: a won claim's
 * lease expires `leaseMs` (from each claim) after the claim by the server's clock, and a lost
 * claim reports the entry's lease and the time left on it (negative once expired), measured by
 * the server's clock at the read.
 */
export const CLAIM_CALLS_FUNCTION = `
CREATE FUNCTION tenxgraph_claim_calls(p_thread_id text, p_claims jsonb)
RETURNS TABLE (claim_index integer, won boolean, call_key text, tool_name text, status text,
               attempt integer, owner_run_id text, started_at timestamptz,
               heartbeat_at timestamptz, lease_expires_at timestamptz,
               lease_expires_in_ms double precision, result jsonb, completed_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  c record;
  got integer;
  batch bigint := nextval('tool_claim_batches');
BEGIN
  FOR c IN
    SELECT (x.ord - 1)::integer AS idx, x.v->>'key' AS k, x.v->>'toolName' AS tool,
           x.v->>'ownerRunId' AS owner, (x.v->>'expectedAttempt')::integer AS expected,
           now() + (x.v->>'leaseMs')::double precision * interval '1 millisecond' AS lease
    FROM jsonb_array_elements(p_claims) WITH ORDINALITY AS x(v, ord)
    ORDER BY x.v->>'key', x.ord
  LOOP
    got := NULL;
    IF c.expected = 0 THEN
      INSERT INTO tool_executions AS t (thread_id, call_key, claim_batch, claim_index, tool_name,
                                        status, attempt, owner_run_id, started_at, heartbeat_at,
                                        lease_expires_at)
      VALUES (p_thread_id, c.k, batch, c.idx, c.tool, 'started', 1, c.owner, now(), now(),
              c.lease)
      ON CONFLICT ON CONSTRAINT tool_executions_pkey DO NOTHING
      RETURNING t.attempt INTO got;
    ELSE
      UPDATE tool_executions t
      SET tool_name = c.tool, status = 'started', attempt = t.attempt + 1,
          owner_run_id = c.owner, started_at = now(), heartbeat_at = now(),
          lease_expires_at = c.lease, result = NULL, completed_at = NULL
      WHERE t.thread_id = p_thread_id AND t.call_key = c.k AND t.attempt = c.expected
      RETURNING t.attempt INTO got;
    END IF;
    claim_index := c.idx;
    won := got IS NOT NULL;
    call_key := c.k;
    IF won THEN
      attempt := got;
      RETURN NEXT;
      CONTINUE;
    END IF;
    -- Lost: report the entry that won, read after its claimant committed.
    SELECT t.tool_name, t.status, t.attempt, t.owner_run_id, t.started_at, t.heartbeat_at,
           t.lease_expires_at,
           extract(epoch FROM t.lease_expires_at - clock_timestamp()) * 1000, t.result,
           t.completed_at
    INTO tool_name, status, attempt, owner_run_id, started_at, heartbeat_at, lease_expires_at,
         lease_expires_in_ms, result, completed_at
    FROM tool_executions t WHERE t.thread_id = p_thread_id AND t.call_key = c.k;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'cannot take over attempt % of call ''%'' on thread ''%'': it has no entry',
        c.expected, c.k, p_thread_id
        USING ERRCODE = 'no_data_found';
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$`;
