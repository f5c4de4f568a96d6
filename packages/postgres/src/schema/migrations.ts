import { CHILD_THREADS_MIGRATION } from "./child-threads-migration.js";
import { HISTORY_MIGRATION } from "./history-migration.js";
import { INCARNATION_ID_MIGRATION } from "./incarnation-id-migration.js";
import { LEASE_MIGRATION } from "./lease-migration.js";
import { OWNER_MIGRATION } from "./owner-migration.js";
import { PUT_CHECKPOINT_WITH_INCARNATION } from "./put-checkpoint-function.js";
import { STEP_LEDGER_MIGRATION } from "./step-ledger-migration.js";

/**
 * The schema, as numbered steps: a migration's position in {@link MIGRATIONS} is its version.
 * Published steps never change; a new schema is a new step appended at the end. Every step runs
 * in the setup transaction, under the advisory lock, so two processes never migrate at once.
 *
 * The data model: `threads` holds one row per thread with its current version, `states`
 * one small row per version (never the transcript: since migration 7, the ranges of message
 * rows it holds), `messages` the append-only table of message rows,
 * `tool_executions` the ledger; every child cascades from `threads`. Payloads are `jsonb`.
 *
 * The two writes that must be one round trip and one transaction (a step, and a node's claims)
 * are PL/pgSQL functions, so a step costs one commit and one network round trip.
 */
/**
 * One step: lock the thread row, compare the version, insert the state row at `version + 1` and
 * the new messages, in the caller's single-statement transaction. Returns the new version, or
 * `NULL` with the version found (`NULL` too when there is no thread) when the compare fails.
 * As published in version 1; migration 2 replaces it (put-checkpoint-function.ts).
 */
const PUT_CHECKPOINT_FUNCTION = `
CREATE FUNCTION tenxgraph_put_checkpoint(
  p_thread_id text, p_user_id text, p_expected bigint, p_step integer, p_current_node text,
  p_status text, p_values jsonb, p_interrupts jsonb, p_resume_answers jsonb,
  p_message_ids text[], p_messages jsonb,
  OUT new_version bigint, OUT found_version bigint, OUT message_count integer,
  OUT thread_user_id text, OUT updated_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  added integer := coalesce(cardinality(p_message_ids), 0);
  first_seq integer;
BEGIN
  IF p_expected = 0 THEN
    INSERT INTO threads (thread_id, user_id, status, version, message_count)
    VALUES (p_thread_id, p_user_id, p_status, 1, added)
    ON CONFLICT ON CONSTRAINT threads_pkey DO NOTHING;
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
    RETURNING threads.user_id INTO thread_user_id;
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

/**
 * A node's claims, in one statement. Keys are locked in sorted order, so two claimers of the
 * same keys cannot deadlock. Expected attempt 0 inserts (only one execution wins the insert);
 * n takes over an entry still at attempt n. A loser gets the entry that is there, read after the
 * winner committed. A takeover of a missing entry raises, and nothing of the batch is applied.
 */
const CLAIM_CALLS_FUNCTION = `
CREATE FUNCTION tenxgraph_claim_calls(p_thread_id text, p_claims jsonb)
RETURNS TABLE (claim_index integer, won boolean, call_key text, tool_name text, status text,
               attempt integer, owner_run_id text, started_at timestamptz,
               heartbeat_at timestamptz, heartbeat_age_ms double precision, result jsonb,
               completed_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  c record;
  got integer;
  batch bigint := nextval('tool_claim_batches');
BEGIN
  FOR c IN
    SELECT (x.ord - 1)::integer AS idx, x.v->>'key' AS k, x.v->>'toolName' AS tool,
           x.v->>'ownerRunId' AS owner, (x.v->>'expectedAttempt')::integer AS expected
    FROM jsonb_array_elements(p_claims) WITH ORDINALITY AS x(v, ord)
    ORDER BY x.v->>'key', x.ord
  LOOP
    got := NULL;
    IF c.expected = 0 THEN
      INSERT INTO tool_executions AS t (thread_id, call_key, claim_batch, claim_index, tool_name,
                                        status, attempt, owner_run_id, started_at, heartbeat_at)
      VALUES (p_thread_id, c.k, batch, c.idx, c.tool, 'started', 1, c.owner, now(), now())
      ON CONFLICT ON CONSTRAINT tool_executions_pkey DO NOTHING
      RETURNING t.attempt INTO got;
    ELSE
      UPDATE tool_executions t
      SET tool_name = c.tool, status = 'started', attempt = t.attempt + 1,
          owner_run_id = c.owner, started_at = now(), heartbeat_at = now(),
          result = NULL, completed_at = NULL
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
           extract(epoch FROM clock_timestamp() - t.heartbeat_at) * 1000, t.result,
           t.completed_at
    INTO tool_name, status, attempt, owner_run_id, started_at, heartbeat_at, heartbeat_age_ms,
         result, completed_at
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

export const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE tenxgraph_schema (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`,
    // Store-wide write order, so listings are exact even within one clock tick.
    `CREATE SEQUENCE threads_write_seq`,
    `CREATE TABLE threads (
      thread_id text PRIMARY KEY,
      user_id text,
      name text,
      status text NOT NULL,
      version bigint NOT NULL CHECK (version > 0),
      message_count integer NOT NULL DEFAULT 0,
      write_seq bigint NOT NULL DEFAULT nextval('threads_write_seq'),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX threads_by_write ON threads (write_seq DESC)`,
    `CREATE INDEX threads_by_user ON threads (user_id, write_seq DESC)`,
    `CREATE TABLE states (
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      version bigint NOT NULL,
      step integer NOT NULL,
      current_node text,
      status text NOT NULL,
      "values" jsonb NOT NULL,
      interrupts jsonb NOT NULL,
      resume_answers jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (thread_id, version)
    )`,
    `CREATE TABLE messages (
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      message_id text NOT NULL,
      -- The message's index in the transcript: 0, 1, 2, … per thread.
      seq integer NOT NULL,
      body jsonb NOT NULL,
      PRIMARY KEY (thread_id, message_id),
      UNIQUE (thread_id, seq)
    )`,
    `CREATE TABLE tool_executions (
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      call_key text NOT NULL,
      -- Claim order, for listings: the claiming batch, then the call's place in it. A takeover
      -- updates the row in place, so the order stays the first claim's.
      claim_batch bigint NOT NULL,
      claim_index integer NOT NULL,
      tool_name text NOT NULL,
      status text NOT NULL CHECK (status IN ('started', 'interrupted', 'completed')),
      attempt integer NOT NULL CHECK (attempt > 0),
      owner_run_id text NOT NULL,
      started_at timestamptz NOT NULL,
      heartbeat_at timestamptz,
      result jsonb,
      completed_at timestamptz,
      PRIMARY KEY (thread_id, call_key)
    )`,
    // A stop may be requested before the thread's first write (a run counts the requests before
    // its start write creates the row), so this is the one table without a foreign key;
    // deleteThread deletes its row in the same statement.
    `CREATE SEQUENCE tool_claim_batches`,
    `CREATE TABLE stop_requests (
      thread_id text PRIMARY KEY,
      count bigint NOT NULL CHECK (count > 0)
    )`,
    PUT_CHECKPOINT_FUNCTION,
    CLAIM_CALLS_FUNCTION,
  ],
  [
    // A thread's incarnation: a deleted thread's id may be reused, but never its incarnation,
    // so a copy of the old thread left in Redis can never pass for the new one. A sequence
    // value, so a newer incarnation is a larger number and the cache can refuse a late write
    // about an older one. ADD COLUMN fills the existing rows, each with a value of its own.
    `CREATE SEQUENCE threads_incarnation`,
    `ALTER TABLE threads
      ADD COLUMN incarnation bigint NOT NULL DEFAULT nextval('threads_incarnation')`,
    `DROP FUNCTION tenxgraph_put_checkpoint(text, text, bigint, integer, text, text, jsonb, jsonb,
      jsonb, text[], jsonb)`,
    PUT_CHECKPOINT_WITH_INCARNATION,
  ],
  [
    // The store's id, made once: it names the store's keys in Redis. A DSN cannot: two servers
    // may each have a database of the same name, and share one Redis. One row at most.
    `CREATE TABLE tenxgraph_store (
      one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
      store_id text NOT NULL
    )`,
    `INSERT INTO tenxgraph_store (store_id) VALUES (gen_random_uuid()::text)`,
  ],
  LEASE_MIGRATION,
  INCARNATION_ID_MIGRATION,
  STEP_LEDGER_MIGRATION,
  HISTORY_MIGRATION,
  CHILD_THREADS_MIGRATION,
  OWNER_MIGRATION,
];

/** The schema version this code writes and reads. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS.length;

/** Tables of ours: found in a schema without `tenxgraph_schema`, they belong to someone else. */
export const OWN_TABLES = [
  "threads",
  "states",
  "messages",
  "tool_executions",
  "stop_requests",
] as const;
