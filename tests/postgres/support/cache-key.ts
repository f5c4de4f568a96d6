/**
 * The Redis key of a thread's hash, as `PgCheckpointer` names it: the store (database and
 * schema) and the thread, so stores sharing one Redis never read each other's threads.
 */
export function threadCacheKey(postgresDsn: string, schema: string, threadId: string): string {
  const database = decodeURIComponent(new URL(postgresDsn).pathname.slice(1)) || "postgres";
  return `tenxgraph:${database}:${schema}:thread:${threadId}`;
}
