/**
 * Migration 8: child threads. A subgraph's thread records the thread it was run for,
 * `threads.parent_thread_id`, set in the transaction of its first write: listings show only
 * threads without one unless asked for a parent's children, and deleting a thread deletes its
 * descendants. The index serves both (children in listing order, top-level threads as those
 * with `NULL`). A step never changes the column, so its update of the thread row stays HOT
 * (migration 6).
 *
 * Threads written before the upgrade recorded no parent, so each gets one by the id a subgraph
 * gives its child (`<parent>|<node>@<step>`): the longest existing thread whose id followed by
 * `|` starts the thread's id. The candidates are the thread's own prefixes, each found by its
 * key; LIKE would misread ids holding `%` or `_`.
 */
export const CHILD_THREADS_MIGRATION: readonly string[] = [
  `ALTER TABLE threads ADD COLUMN parent_thread_id text`,
  `CREATE INDEX threads_by_parent ON threads (parent_thread_id, write_seq DESC)`,
  `UPDATE threads c
   SET parent_thread_id = (
     SELECT p.thread_id
     FROM generate_series(length(c.thread_id) - 1, 1, -1) AS cut(len)
     JOIN threads p ON p.thread_id = left(c.thread_id, cut.len)
     WHERE substr(c.thread_id, 1, length(p.thread_id) + 1) = p.thread_id || '|'
     ORDER BY cut.len DESC
     LIMIT 1)
   WHERE strpos(c.thread_id, '|') > 0`,
];
