/**
 * The first completion of a step write whose claim is no longer held: its entry is missing, not
 * `started`, or at another attempt (`NULL`s when every claim is held). The entries are locked
 * first, in key order as claims lock them, so none can change between this check and the
 * write that follows in the same transaction.
 */
export const LOST_COMPLETION_FUNCTION = `
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
