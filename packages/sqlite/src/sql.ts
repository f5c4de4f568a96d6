import type Database from "better-sqlite3";
import { keepAlive } from "./keep-alive.js";

/** The `claim_seq` of a thread's next entry: one search of `tool_executions_by_claim`. */
const NEXT_CLAIM_SEQ = `(SELECT COALESCE(MAX(claim_seq), 0) + 1 FROM tool_executions
                         WHERE thread_id = @threadId)`;

/** Every statement the checkpointer runs, by name; prepared once per connection. */
export const SQL = {
  selectCheckpoint: `
    SELECT t.thread_id, t.incarnation, t.user_id, t.version, t.message_count, t.updated_at,
           s.step, s.current_node, s.status, s.values_json, s.interrupts_json,
           s.resume_answers_json
    FROM threads t JOIN states s ON s.thread_id = t.thread_id AND s.version = t.version
    WHERE t.thread_id = ?`,
  selectVersion: `SELECT version FROM threads WHERE thread_id = ?`,
  /** Creates the thread; does nothing when it exists (the caller then reports the conflict). */
  insertThread: `
    INSERT INTO threads (thread_id, incarnation, user_id, status, version, message_count,
                         write_seq, created_at, updated_at)
    VALUES (@threadId, @incarnation, @userId, @status, 1, @added,
            (SELECT COALESCE(MAX(write_seq), 0) + 1 FROM threads), @now, @now)
    ON CONFLICT (thread_id) DO NOTHING`,
  /**
   * The compare-and-swap of a step that keeps the thread's status and user, as most steps do:
   * it moves the thread only from the version (of the life) the write was computed from, and
   * sets no indexed column, so neither listing index is written. (SQLite rewrites an index
   * whenever its column is assigned, even to the same value.) A write it does not match is a
   * status change or stale: `advanceThreadRelisted` tells which.
   */
  advanceThread: `
    UPDATE threads
    SET version = version + 1, message_count = message_count + @added, updated_at = @now
    WHERE thread_id = @threadId AND version = @expectedVersion AND incarnation = @incarnation
      AND status = @status AND (@userId IS NULL OR user_id IS @userId)
    RETURNING message_count - @added AS first_seq`,
  /**
   * The compare-and-swap of a write that changes the status (or the user): a new status moves
   * the thread to the top of the listings, as creating it did.
   */
  advanceThreadRelisted: `
    UPDATE threads
    SET user_id = COALESCE(@userId, user_id), status = @status, version = version + 1,
        message_count = message_count + @added,
        write_seq = CASE WHEN status = @status THEN write_seq
                         ELSE (SELECT MAX(write_seq) FROM threads) + 1 END,
        updated_at = @now
    WHERE thread_id = @threadId AND version = @expectedVersion AND incarnation = @incarnation
    RETURNING message_count - @added AS first_seq`,
  insertState: `
    INSERT INTO states (thread_id, version, step, current_node, status, values_json,
                        interrupts_json, resume_answers_json, created_at)
    VALUES (@threadId, @version, @step, @currentNode, @status, @valuesJson, @interruptsJson,
            @resumeAnswersJson, @now)`,
  insertMessage: `
    INSERT INTO messages (thread_id, message_id, seq, body_json) VALUES (?, ?, ?, ?)`,
  selectMessages: `
    SELECT body_json FROM messages WHERE thread_id = ? AND seq >= ? ORDER BY seq LIMIT ?`,
  selectThreads: `
    SELECT thread_id, user_id, status, version, updated_at FROM threads
    ORDER BY write_seq DESC LIMIT ? OFFSET ?`,
  selectThreadsOfUser: `
    SELECT thread_id, user_id, status, version, updated_at FROM threads WHERE user_id = ?
    ORDER BY write_seq DESC LIMIT ? OFFSET ?`,
  deleteThread: `DELETE FROM threads WHERE thread_id = ?`,
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
