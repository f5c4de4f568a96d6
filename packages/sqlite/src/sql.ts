import type Database from "better-sqlite3";
import { keepAlive } from "./keep-alive.js";

/** The `claim_seq` of a thread's next entry: one search of `tool_executions_by_claim`. */
const NEXT_CLAIM_SEQ = `(SELECT COALESCE(MAX(claim_seq), 0) + 1 FROM tool_executions
                         WHERE thread_id = @threadId)`;

/**
 * A version as `toCheckpoint` reads it: the thread's identity from `threads`, the rest from the
 * version's own row of `states` (for the head, `updated_at` and `message_count` are the same in
 * both tables).
 */
const CHECKPOINT_COLUMNS = `
  t.thread_id, t.parent_thread_id, t.incarnation, t.user_id, s.version, s.parent_version, s.node, s.run_id,
  s.message_count, s.created_at AS updated_at, s.status, s.record_json`;

/** Every statement the checkpointer runs, by name; prepared once per connection. */
export const SQL = {
  /** The head version; its transcript length is `threads.message_count` too. */
  selectCheckpoint: `
    SELECT ${CHECKPOINT_COLUMNS}
    FROM threads t JOIN states s ON s.thread_id = t.thread_id AND s.version = t.version
    WHERE t.thread_id = ?`,
  /** A kept version; versions from before the upgrade to history (no transcript) are not. */
  selectStateVersion: `
    SELECT ${CHECKPOINT_COLUMNS}
    FROM threads t JOIN states s ON s.thread_id = t.thread_id
    WHERE t.thread_id = ? AND s.version = ? AND s.message_count IS NOT NULL`,
  selectStateVersions: `
    SELECT ${CHECKPOINT_COLUMNS}
    FROM threads t JOIN states s ON s.thread_id = t.thread_id
    WHERE t.thread_id = @threadId AND s.message_count IS NOT NULL
      AND (@before IS NULL OR s.version < @before)
    ORDER BY s.version DESC LIMIT @limit`,
  /** The transcript of version `@version`, or of the head when it is NULL. */
  selectTranscript: `
    SELECT message_count, message_ranges FROM states
    WHERE thread_id = @threadId
      AND version = COALESCE(@version, (SELECT version FROM threads WHERE thread_id = @threadId))`,
  /** The transcripts a pruning keeps: every version that has one. */
  selectKeptTranscripts: `
    SELECT message_count, message_ranges FROM states
    WHERE thread_id = ? AND message_count IS NOT NULL`,
  selectVersion: `SELECT version, incarnation FROM threads WHERE thread_id = ?`,
  /** Creates the thread; does nothing when it exists (the caller then reports the conflict). */
  insertThread: `
    INSERT INTO threads (thread_id, incarnation, parent_thread_id, user_id, status, version,
                         message_count, next_seq, write_seq, created_at, updated_at)
    VALUES (@threadId, @incarnation, @parentThreadId, @userId, @status, 1, @messageCount,
            @rowsAdded, (SELECT COALESCE(MAX(write_seq), 0) + 1 FROM threads), @now, @now)
    ON CONFLICT (thread_id) DO NOTHING`,
  /**
   * The compare-and-swap of a step that keeps the thread's status, as most steps do:
   * it moves the thread only from the version (of the life) the write was computed from, and
   * sets no indexed column, so neither listing index is written. (SQLite rewrites an index
   * whenever its column is assigned, even to the same value.) A write it does not match is a
   * status change or stale: `advanceThreadRelisted` tells which. Returns the place of the
   * write's first new message row. Neither statement matches a write naming a user other than
   * the thread's owner: no write changes the owner.
   */
  advanceThread: `
    UPDATE threads
    SET version = version + 1, message_count = @messageCount, next_seq = next_seq + @rowsAdded,
        updated_at = @now
    WHERE thread_id = @threadId AND version = @expectedVersion AND incarnation = @incarnation
      AND status = @status AND (@userId IS NULL OR user_id IS @userId)
    RETURNING next_seq - @rowsAdded AS first_seq`,
  /**
   * The compare-and-swap of a write that changes the status: a new status moves the thread to
   * the top of the listings, as creating it did.
   */
  advanceThreadRelisted: `
    UPDATE threads
    SET status = @status, version = version + 1,
        message_count = @messageCount, next_seq = next_seq + @rowsAdded,
        write_seq = CASE WHEN status = @status THEN write_seq
                         ELSE (SELECT MAX(write_seq) FROM threads) + 1 END,
        updated_at = @now
    WHERE thread_id = @threadId AND version = @expectedVersion AND incarnation = @incarnation
      AND (@userId IS NULL OR user_id IS @userId)
    RETURNING next_seq - @rowsAdded AS first_seq`,
  insertState: `
    INSERT INTO states (thread_id, version, parent_version, node, run_id, status, record_json,
                        message_count, message_ranges, created_at)
    VALUES (@threadId, @version, @parentVersion, @node, @runId, @status, @recordJson,
            @messageCount, @messageRanges, @now)`,
  /** Drops the versions `keepVersions` pushed out, and says which had a transcript. */
  deleteStatesUpTo: `
    DELETE FROM states WHERE thread_id = ? AND version <= ? RETURNING message_count`,
  /** The oldest version a pruning keeps: the `?`-th newest (from 0) that has a transcript. */
  selectOldestKept: `
    SELECT version FROM states WHERE thread_id = ? AND message_count IS NOT NULL
    ORDER BY version DESC LIMIT 1 OFFSET ?`,
  insertMessage: `
    INSERT INTO messages (thread_id, seq, message_id, body_json) VALUES (?, ?, ?, ?)`,
  /** The rows of one message id (an edit or an abandoned branch may reuse it), by `messages_by_id`. */
  selectMessageSeqs: `SELECT seq FROM messages WHERE thread_id = ? AND message_id = ?`,
  /** The rows `[start, end)` of one range of a transcript, in order. */
  selectMessageRange: `
    SELECT body_json FROM messages WHERE thread_id = ? AND seq >= ? AND seq < ? ORDER BY seq`,
  deleteMessageRange: `DELETE FROM messages WHERE thread_id = ? AND seq >= ? AND seq < ?`,
  setDeleteAfter: `UPDATE threads SET delete_after = ? WHERE thread_id = ?`,
  /** Found through the partial index `threads_by_delete_after`. */
  selectExpiredThreads: `
    SELECT thread_id FROM threads WHERE delete_after <= ? ORDER BY delete_after`,
  /** Top-level threads: those without a parent, found through `threads_by_parent`. */
  selectThreads: `
    SELECT thread_id, parent_thread_id, user_id, status, version, updated_at FROM threads
    WHERE parent_thread_id IS NULL
    ORDER BY write_seq DESC LIMIT ? OFFSET ?`,
  selectThreadsOfUser: `
    SELECT thread_id, parent_thread_id, user_id, status, version, updated_at FROM threads
    WHERE user_id = ? AND parent_thread_id IS NULL
    ORDER BY write_seq DESC LIMIT ? OFFSET ?`,
  /** A thread's direct children, of one user when `@userId` is not NULL. */
  selectChildThreads: `
    SELECT thread_id, parent_thread_id, user_id, status, version, updated_at FROM threads
    WHERE parent_thread_id = @parentThreadId AND (@userId IS NULL OR user_id = @userId)
    ORDER BY write_seq DESC LIMIT @limit OFFSET @offset`,
  /**
   * The thread and its descendants, by recorded parent. UNION takes each thread once, so a
   * parent named before it existed cannot loop the walk.
   */
  selectFamily: `
    WITH RECURSIVE family(thread_id) AS (
      SELECT thread_id FROM threads WHERE thread_id = ?
      UNION
      SELECT t.thread_id FROM threads t JOIN family f ON t.parent_thread_id = f.thread_id
    )
    SELECT thread_id FROM family`,
  deleteThread: `DELETE FROM threads WHERE thread_id = ?`,
  /** The direct children of a thread, of any user. */
  selectChildThreadIds: `SELECT thread_id FROM threads WHERE parent_thread_id = ?`,
  /** Keys of the thread's calls claimed and not recorded. */
  selectStartedCallKeys: `
    SELECT call_key FROM tool_executions WHERE thread_id = ? AND status = 'started'
    ORDER BY claim_seq`,
  /** `copyThread`'s thread row: a new life, listed as just created, with no parent. */
  copyThreadRow: `
    INSERT INTO threads (thread_id, incarnation, parent_thread_id, user_id, status, version,
                         message_count, next_seq, write_seq, created_at, updated_at)
    SELECT @to, @incarnation, NULL, user_id, status, version, message_count, next_seq,
           (SELECT MAX(write_seq) FROM threads) + 1, @now, updated_at
    FROM threads WHERE thread_id = @from`,
  copyStates: `
    INSERT INTO states (thread_id, version, parent_version, node, run_id, status, record_json,
                        message_count, message_ranges, created_at)
    SELECT @to, version, parent_version, node, run_id, status, record_json, message_count,
           message_ranges, created_at
    FROM states WHERE thread_id = @from`,
  copyMessages: `
    INSERT INTO messages (thread_id, seq, message_id, body_json)
    SELECT @to, seq, message_id, body_json FROM messages WHERE thread_id = @from`,
  copyCalls: `
    INSERT INTO tool_executions (thread_id, call_key, claim_seq, tool_name, status, attempt,
                                 owner_run_id, started_at, heartbeat_at, lease_expires_at,
                                 result_json, completed_at)
    SELECT @to, call_key, claim_seq, tool_name, status, attempt, owner_run_id, started_at,
           heartbeat_at, lease_expires_at, result_json, completed_at
    FROM tool_executions WHERE thread_id = @from`,
  deleteStopRequests: `DELETE FROM stop_requests WHERE thread_id = ?`,
  requestStop: `
    INSERT INTO stop_requests (thread_id, count) VALUES (?, 1)
    ON CONFLICT (thread_id) DO UPDATE SET count = count + 1`,
  countStopRequests: `SELECT count FROM stop_requests WHERE thread_id = ?`,

  selectCall: `SELECT * FROM tool_executions WHERE thread_id = ? AND call_key = ?`,
  /** The entries of a JSON array of keys, in one statement and so one snapshot. */
  selectCallsByKey: `
    SELECT * FROM tool_executions
    WHERE thread_id = ? AND call_key IN (SELECT value FROM json_each(?))`,
  /** Oldest claim first: a takeover keeps the entry's `claim_seq`. */
  selectCalls: `SELECT * FROM tool_executions WHERE thread_id = ? ORDER BY claim_seq`,
  /**
   * A new entry, after every entry of its thread (`claim_seq` is its thread's largest plus one,
   * so the claims of one batch keep their order).
   */
  insertCall: `
    INSERT INTO tool_executions (thread_id, call_key, claim_seq, tool_name, status, attempt,
                                 owner_run_id, started_at, heartbeat_at, lease_expires_at)
    VALUES (@threadId, @key, ${NEXT_CLAIM_SEQ}, @toolName, 'started', 1, @ownerRunId, @now, @now,
            @leaseExpiresAt)`,
  /** A claim riding in a step write: inserts only where the key has no entry. */
  insertCallIfAbsent: `
    INSERT INTO tool_executions (thread_id, call_key, claim_seq, tool_name, status, attempt,
                                 owner_run_id, started_at, heartbeat_at, lease_expires_at)
    VALUES (@threadId, @key, ${NEXT_CLAIM_SEQ}, @toolName, 'started', 1, @ownerRunId, @now, @now,
            @leaseExpiresAt)
    ON CONFLICT (thread_id, call_key) DO NOTHING`,
  /** A takeover: compare-and-swap on the attempt the claimant saw. */
  takeOverCall: `
    UPDATE tool_executions
    SET tool_name = @toolName, status = 'started', attempt = attempt + 1,
        owner_run_id = @ownerRunId, started_at = @now, heartbeat_at = @now,
        lease_expires_at = @leaseExpiresAt, result_json = NULL, completed_at = NULL
    WHERE thread_id = @threadId AND call_key = @key AND attempt = @expectedAttempt`,
  /** Fenced: only the attempt that holds the claim may record its result. */
  completeCall: `
    UPDATE tool_executions
    SET status = 'completed', result_json = @resultJson, completed_at = @now, heartbeat_at = NULL,
        lease_expires_at = NULL
    WHERE thread_id = @threadId AND call_key = @key AND attempt = @attempt AND status = 'started'`,
  releaseCall: `
    UPDATE tool_executions SET status = 'interrupted', heartbeat_at = NULL, lease_expires_at = NULL
    WHERE thread_id = @threadId AND call_key = @key AND attempt = @attempt AND status = 'started'`,
  /** Renews the lease of the attempt that holds the claim; no change means it lost the claim. */
  heartbeatCall: `
    UPDATE tool_executions SET heartbeat_at = @now, lease_expires_at = @leaseExpiresAt
    WHERE thread_id = @threadId AND call_key = @key AND attempt = @attempt AND status = 'started'`,
} as const;

/** The prepared form of {@link SQL}. */
export type Statements = { [Name in keyof typeof SQL]: Database.Statement };

export function prepareStatements(db: Database.Database): Statements {
  const entries = Object.entries(SQL).map(([name, sql]) => [name, keepAlive(db.prepare(sql))]);
  return Object.fromEntries(entries) as Statements;
}
