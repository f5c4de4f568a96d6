import { PUT_CHECKPOINT_WITH_HISTORY_FUNCTION } from "./put-checkpoint-history-function.js";

/**
 * The SQLSTATE of a write that names a user other than the thread's owner: the step function
 * raises it, so nothing of the write is applied, and the checkpointer reports
 * `ThreadOwnerError` (`STORAGE_OWNER_001`).
 */
export const OWNER_REFUSED = "TXG02";

/** Where migration 7's function compares version and incarnation, and what it declares. */
const COMPARE = `    SELECT t.version, t.message_count, t.next_seq, t.incarnation_id, t.status
    INTO found_version, head_count, row_seq, found_life, found_status
    FROM threads t WHERE t.thread_id = p_thread_id FOR NO KEY UPDATE;
    IF found_version IS DISTINCT FROM p_expected OR found_life IS DISTINCT FROM p_incarnation_id
    THEN
      RETURN;
    END IF;
`;
const DECLARED = `  found_status text;
`;

/**
 * The same compare, reading the owner too, then refusing a write that names another user
 * (after the version compare, so a stale write is still reported as stale). A write without a
 * user keeps the owner, as before.
 */
const COMPARE_WITH_OWNER = `    SELECT t.version, t.message_count, t.next_seq, t.incarnation_id, t.status, t.user_id
    INTO found_version, head_count, row_seq, found_life, found_status, found_owner
    FROM threads t WHERE t.thread_id = p_thread_id FOR NO KEY UPDATE;
    IF found_version IS DISTINCT FROM p_expected OR found_life IS DISTINCT FROM p_incarnation_id
    THEN
      RETURN;
    END IF;
    IF p_user_id IS NOT NULL AND found_owner IS DISTINCT FROM p_user_id THEN
      RAISE EXCEPTION 'thread ''%'' belongs to another user: a write as user ''%'' cannot change its owner',
        p_thread_id, p_user_id USING ERRCODE = '${OWNER_REFUSED}';
    END IF;
`;

/** `text` with `from`, which must occur in it exactly once, replaced by `to`. */
function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) {
    throw new Error(`owner migration: the step function does not hold this text once: ${from}`);
  }
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/**
 * `tenxgraph_put_checkpoint` as migration 9 leaves it: migration 7's function (its text lives
 * once, in put-checkpoint-history-function.ts) with the owner check above. Same arguments and
 * results, so it replaces the function in place.
 */
export const PUT_CHECKPOINT_WITH_OWNER_FUNCTION = replaceOnce(
  replaceOnce(
    replaceOnce(
      PUT_CHECKPOINT_WITH_HISTORY_FUNCTION,
      "CREATE FUNCTION",
      "CREATE OR REPLACE FUNCTION",
    ),
    DECLARED,
    `${DECLARED}  found_owner text;\n`,
  ),
  COMPARE,
  COMPARE_WITH_OWNER,
);

/**
 * Migration 9: a write never changes a thread's owner. Until now a step naming another user
 * made that user the owner (`user_id = coalesce(p_user_id, user_id)`), so a run of user B on a
 * thread user A created (a background run, say) handed B the thread. The write that creates a
 * thread sets its owner; a later write naming another user is refused (`OWNER_REFUSED`), and
 * nothing of it is applied. The update still assigns `user_id`, now always to the value it
 * holds, so a step's update stays HOT (migration 6).
 */
export const OWNER_MIGRATION: readonly string[] = [PUT_CHECKPOINT_WITH_OWNER_FUNCTION];
