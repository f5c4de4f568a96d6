import type { Message } from "@tenxgraph/core";
import type { MessagePage, ThreadCheckpoint, VersionRange } from "@tenxgraph/core/storage";
import type { Database } from "../connection/database.js";
import { fromJsonb } from "../json.js";
import { toCheckpoint } from "../rows.js";
import type { CheckpointRow } from "../rows.js";

/**
 * A kept version as a checkpoint: the thread's columns with the version's state row, whose
 * `created_at` is the time of the write (the head's equals `threads.updated_at`: both are the
 * writing transaction's `now()`). Rows with `message_count` `NULL` were written before the store
 * kept history (migration 7): their transcript is unknown, so they are read as not kept.
 */
const SELECT_VERSIONS = `
  SELECT t.thread_id, t.parent_thread_id, t.incarnation_id, t.user_id, s.version, t.incarnation, s.message_count,
         s.created_at AS updated_at, s.parent_version, s.node, s.run_id, s.status, s.record
  FROM states s JOIN threads t ON t.thread_id = s.thread_id
  WHERE s.thread_id = $1 AND s.message_count IS NOT NULL`;

/**
 * A page of a version's transcript (the head's when `$2` is `NULL`) in one statement. A prefix
 * (`message_ranges` `NULL`) is read straight off the primary key, bounded by the version's
 * count: rows past it may belong to a branch a fork abandoned. Other ranges are expanded by
 * `tenxgraph_transcript_seqs` (given count 0, so a prefix expands to nothing there) and paged
 * by position.
 */
const SELECT_MESSAGES = `
  WITH v AS (
    SELECT s.message_count AS n, s.message_ranges AS ranges
    FROM threads t JOIN states s ON s.thread_id = t.thread_id
      AND s.version = coalesce($2::bigint, t.version)
    WHERE t.thread_id = $1 AND s.message_count IS NOT NULL
  )
  (SELECT m.body, m.seq::bigint AS pos
   FROM v JOIN messages m ON m.thread_id = $1 AND m.seq >= $3::bigint AND m.seq < v.n
   WHERE v.ranges IS NULL
   ORDER BY m.seq LIMIT $4::bigint)
  UNION ALL
  (SELECT m.body, p.pos
   FROM v CROSS JOIN LATERAL (
     SELECT r.pos, r.seq FROM tenxgraph_transcript_seqs(v.ranges, 0) r
     ORDER BY r.pos OFFSET $3::bigint LIMIT $4::bigint
   ) p
   JOIN messages m ON m.thread_id = $1 AND m.seq = p.seq)
  ORDER BY pos`;

/**
 * Keeps the newest `$2` kept versions and deletes the older state rows (those written before
 * the store kept history among them), then every message row no kept version holds. Returns
 * how many kept versions went. The kept prefixes together hold the rows below the longest one,
 * so only versions with ranges are expanded (given count 0, a prefix expands to nothing).
 */
const PRUNE_VERSIONS = `
  WITH kept AS (
    SELECT s.version, s.message_count, s.message_ranges FROM states s
    WHERE s.thread_id = $1 AND s.message_count IS NOT NULL
    ORDER BY s.version DESC LIMIT $2
  ),
  dropped AS (
    DELETE FROM states s
    WHERE s.thread_id = $1 AND s.version < (SELECT min(k.version) FROM kept k)
    RETURNING s.message_count
  ),
  unheld AS (
    DELETE FROM messages m
    WHERE m.thread_id = $1 AND EXISTS (SELECT 1 FROM kept)
      AND m.seq >= coalesce(
        (SELECT max(k.message_count) FROM kept k WHERE k.message_ranges IS NULL), 0)
      AND m.seq NOT IN (
        SELECT r.seq FROM kept k
        CROSS JOIN LATERAL tenxgraph_transcript_seqs(k.message_ranges, 0) r)
  )
  SELECT count(*) FILTER (WHERE d.message_count IS NOT NULL) AS dropped FROM dropped d`;

/** Reads and prunes the versions of threads, and keeps their delete-after times. */
export class PgHistory {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async loadMessages(threadId: string, page: MessagePage): Promise<Message[]> {
    const { version, offset, limit } = page;
    const rows = await this.#db.query<{ body: unknown }>(
      "listMessages",
      "repeatable",
      SELECT_MESSAGES,
      [threadId, version, offset, limit],
    );
    return rows.map((row) => fromJsonb(row.body) as Message);
  }

  async loadVersion(threadId: string, version: number): Promise<ThreadCheckpoint | null> {
    const [row] = await this.#db.query<CheckpointRow>(
      "getVersion",
      "repeatable",
      `${SELECT_VERSIONS} AND s.version = $2`,
      [threadId, version],
    );
    return row ? toCheckpoint(row) : null;
  }

  async loadVersions(
    threadId: string,
    { limit, before }: VersionRange,
  ): Promise<ThreadCheckpoint[]> {
    const rows = await this.#db.query<CheckpointRow>(
      "listVersions",
      "repeatable",
      `${SELECT_VERSIONS} AND ($2::bigint IS NULL OR s.version < $2)
       ORDER BY s.version DESC LIMIT $3`,
      [threadId, before, limit],
    );
    return rows.map(toCheckpoint);
  }

  /**
   * One transaction that first locks the thread row, as a step does: a step forking a version
   * this prunes would otherwise keep rows this deletes. Repeatable: a second run keeps the same
   * versions (it may then report fewer deleted).
   */
  async removeVersions(threadId: string, keepLast: number): Promise<number> {
    return this.#db.transaction("pruneVersions", "repeatable", async (client) => {
      await client.query("SELECT 1 FROM threads WHERE thread_id = $1 FOR NO KEY UPDATE", [
        threadId,
      ]);
      const { rows } = await client.query<{ dropped: string }>(PRUNE_VERSIONS, [
        threadId,
        keepLast,
      ]);
      return Number(rows[0]?.dropped ?? 0);
    });
  }

  async saveDeleteAfter(threadId: string, at: string | null): Promise<boolean> {
    const rows = await this.#db.query(
      "setDeleteAfter",
      "repeatable",
      `UPDATE threads SET delete_after = $2 WHERE thread_id = $1 RETURNING thread_id`,
      [threadId, at],
    );
    return rows.length > 0;
  }

  /** Found through the partial index on `delete_after` (migration 7). */
  async loadExpiredThreads(now: string): Promise<string[]> {
    const rows = await this.#db.query<{ thread_id: string }>(
      "deleteExpiredThreads",
      "repeatable",
      `SELECT thread_id FROM threads WHERE delete_after <= $1 ORDER BY delete_after, thread_id`,
      [now],
    );
    return rows.map((row) => row.thread_id);
  }
}
