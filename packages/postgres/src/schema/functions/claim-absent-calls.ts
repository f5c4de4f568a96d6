/**
 * The claims of a step write: each inserted as attempt 1 where its key has no entry, with its
 * lease on the server's clock and the claim order of `tenxgraph_claim_calls` (one batch, the
 * claim's place in it), in key order so two claimers cannot deadlock. Returns one outcome per
 * claim, in the claims' order: `{"won": true}`, or `{"won": false, "entry": {...}}` with the
 * entry's columns as `tenxgraph_claim_calls` returns them.
 */
export const CLAIM_ABSENT_CALLS_FUNCTION = `
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
  -- Every claim won (the keys are distinct): nothing to read back.
  IF cardinality(won_keys) = jsonb_array_length(p_claims) THEN
    RETURN to_jsonb(array_fill('{"won": true}'::jsonb, ARRAY[cardinality(won_keys)]));
  END IF;
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
