import type { Database } from "./connection/database.js";

/**
 * The thread `$1` and its descendants (by recorded parent), each row locked `FOR UPDATE`: a step
 * in flight on one holds its row, so this waits for it to commit, and no step can write to one
 * after. UNION takes each thread once, so a parent named before it existed cannot loop the walk.
 */
const LOCK_FAMILY = `
  WITH RECURSIVE family AS (
    SELECT thread_id FROM threads WHERE thread_id = $1
    UNION
    SELECT t.thread_id FROM threads t JOIN family f ON t.parent_thread_id = f.thread_id
  )
  SELECT t.thread_id FROM threads t WHERE t.thread_id IN (SELECT thread_id FROM family)
  FOR UPDATE OF t`;

/**
 * The locked threads `$2` deleted with their states and messages (which have no foreign key,
 * migration 13), their ledger (which cascades), and the stop requests of `$1` and of them; a
 * statement after the lock, so its snapshot holds every row the steps waited for committed.
 */
const DELETE_FAMILY = `
  WITH stops AS (
    DELETE FROM stop_requests WHERE thread_id = $1 OR thread_id = ANY ($2)
  ),
  state_rows AS (DELETE FROM states WHERE thread_id = ANY ($2)),
  message_rows AS (DELETE FROM messages WHERE thread_id = ANY ($2))
  DELETE FROM threads WHERE thread_id = ANY ($2)
  RETURNING thread_id`;

/**
 * Deletes the thread and its descendants in one transaction: each row locked first, so a step in
 * flight commits before and none writes after. Returns the ids deleted (none for an unknown thread).
 */
export async function deleteFamily(db: Database, threadId: string): Promise<string[]> {
  const rows = await db.transaction("deleteThread", "repeatable", async (client) => {
    const locked = await client.query<{ thread_id: string }>(LOCK_FAMILY, [threadId]);
    const ids = locked.rows.map((row) => row.thread_id);
    return (await client.query<{ thread_id: string }>(DELETE_FAMILY, [threadId, ids])).rows;
  });
  return rows.map((row) => row.thread_id);
}
