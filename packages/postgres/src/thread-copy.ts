import type { ThreadStatus } from "@tenxgraph/core/storage";
import { copyRefusal, ThreadCopyError } from "@tenxgraph/core/storage";
import type pg from "pg";
import type { Database } from "./connection/database.js";

/**
 * The source's row, locked: a step of the thread (an update of it) and a new ledger entry (its
 * foreign key check) wait for the copy's commit, so the copy holds the thread as it was when
 * the refusal was decided.
 */
const LOCK_SOURCE = `
  SELECT status, parent_thread_id FROM threads WHERE thread_id = $1 FOR UPDATE`;

/** The source's entries, locked: a completion or takeover of one waits for the copy too. */
const LOCK_CALLS = `
  SELECT call_key, status FROM tool_executions WHERE thread_id = $1
  ORDER BY claim_batch, claim_index FOR UPDATE`;

const CHILDREN = `SELECT thread_id FROM threads WHERE parent_thread_id = $1`;

/**
 * The copy's row: a new life (its incarnation and write order from their sequences, so it is
 * listed as just created), no parent, no delete-after time. Nothing when the id is taken.
 */
const COPY_THREAD_ROW = `
  INSERT INTO threads (thread_id, user_id, name, status, version, message_count, updated_at,
                       incarnation_id, next_seq, parent_thread_id)
  SELECT $2, user_id, name, status, version, message_count, updated_at, $3, next_seq, NULL
  FROM threads WHERE thread_id = $1
  ON CONFLICT (thread_id) DO NOTHING
  RETURNING thread_id`;

/** Every version, message row (same `seq`s, which transcripts name) and ledger entry. */
const COPY_ROWS = [
  `INSERT INTO states (thread_id, version, status, created_at, parent_version, node, run_id,
                       message_count, message_ranges, record)
   SELECT $2, version, status, created_at, parent_version, node, run_id, message_count,
          message_ranges, record
   FROM states WHERE thread_id = $1`,
  `INSERT INTO messages (thread_id, message_id, seq, body)
   SELECT $2, message_id, seq, body FROM messages WHERE thread_id = $1`,
  `INSERT INTO tool_executions (thread_id, call_key, claim_batch, claim_index, tool_name, status,
                                attempt, owner_run_id, started_at, heartbeat_at, result,
                                completed_at, lease_expires_at)
   SELECT $2, call_key, claim_batch, claim_index, tool_name, status, attempt, owner_run_id,
          started_at, heartbeat_at, result, completed_at, lease_expires_at
   FROM tool_executions WHERE thread_id = $1`,
];

/**
 * The rows a delete by a release before migration 13 (which relied on the foreign keys' cascade)
 * left behind under the copy's id: the copy starts with none.
 */
const CLEAR_LEFTOVERS = `
  WITH state_rows AS (DELETE FROM states WHERE thread_id = $1)
  DELETE FROM messages WHERE thread_id = $1`;

/**
 * Copies thread `from` to `to` in one transaction (see `Checkpointer.copyThread`): the locks
 * and reads `copyRefusal` decides on, then the rows. Once: a copy cut off mid-flight may have
 * committed, and a second try would find its own copy and be refused.
 */
export async function copyThread(
  db: Database,
  from: string,
  to: string,
  incarnation: string,
): Promise<void> {
  await db.transaction("copyThread", "once", async (client) => {
    const [head] = await rowsOf<{ status: ThreadStatus; parent_thread_id: string | null }>(
      client,
      LOCK_SOURCE,
      [from],
    );
    const calls = await rowsOf<{ call_key: string; status: string }>(client, LOCK_CALLS, [from]);
    const children = await rowsOf<{ thread_id: string }>(client, CHILDREN, [from]);
    const taken = await rowsOf(client, `SELECT 1 FROM threads WHERE thread_id = $1`, [to]);
    const refusal = copyRefusal({
      head: head ? { status: head.status, parentThreadId: head.parent_thread_id } : null,
      targetExists: taken.length > 0,
      childThreadIds: children.map((row) => row.thread_id),
      startedKeys: calls.filter((row) => row.status === "started").map((row) => row.call_key),
    });
    if (refusal !== null) throw new ThreadCopyError(from, to, refusal);
    const inserted = await rowsOf(client, COPY_THREAD_ROW, [from, to, incarnation]);
    // Created since the check above, by another transaction: refused as if seen.
    if (inserted.length === 0) throw new ThreadCopyError(from, to, { reason: "target-exists" });
    await client.query(CLEAR_LEFTOVERS, [to]);
    for (const statement of COPY_ROWS) await client.query(statement, [from, to]);
  });
}

async function rowsOf<Row extends pg.QueryResultRow>(
  client: pg.PoolClient,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  return (await client.query<Row>(text, values)).rows;
}
