import pg from "pg";
import { sql } from "../../../packages/postgres/src/support/pg-inspect.js";

/**
 * The Redis key of a thread's hash, as `PgCheckpointer` names it by default: the store id that
 * its first `setup()` kept in the schema, then the thread. The id, not the DSN, names the store,
 * so stores sharing one Redis never read each other's threads.
 */
export async function threadCacheKey(
  postgresDsn: string,
  schema: string,
  threadId: string,
): Promise<string> {
  const [row] = await sql<{ store_id: string }>(
    postgresDsn,
    `SELECT store_id FROM ${pg.escapeIdentifier(schema)}.tenxgraph_store`,
  );
  if (!row) throw new Error(`schema ${schema} has no store id: was setup() run?`);
  return `tenxgraph:${row.store_id}:thread:${threadId}`;
}
