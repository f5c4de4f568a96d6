import pg from "pg";

/** The tables of a tenxgraph schema that hold rows of a thread. */
export const THREAD_TABLES = [
  "threads",
  "states",
  "messages",
  "tool_executions",
  "stop_requests",
] as const;

export type ThreadTable = (typeof THREAD_TABLES)[number];

/**
 * Runs one statement on a connection of the test's own, outside any checkpointer: what the
 * database really holds, whatever a checkpointer or its cache says.
 */
export async function sql<Row extends pg.QueryResultRow = Record<string, unknown>>(
  dsn: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** How many rows each table of `schema` holds for `threadId`. */
export async function threadRowCounts(
  dsn: string,
  schema: string,
  threadId: string,
): Promise<Record<ThreadTable, number>> {
  const counts = await Promise.all(
    THREAD_TABLES.map(async (table) => {
      const [row] = await sql<{ n: string }>(
        dsn,
        `SELECT count(*) AS n FROM ${pg.escapeIdentifier(schema)}.${table} WHERE thread_id = $1`,
        [threadId],
      );
      return [table, Number(row!.n)] as const;
    }),
  );
  return Object.fromEntries(counts) as Record<ThreadTable, number>;
}

/** The rows of `states` for `threadId`, oldest first: one per durable write. */
export async function stateRows(
  dsn: string,
  schema: string,
  threadId: string,
): Promise<{ version: number; status: string; currentNode: string | null }[]> {
  const rows = await sql<{ version: string; status: string; current_node: string | null }>(
    dsn,
    `SELECT version, status, record->>'currentNode' AS current_node
     FROM ${pg.escapeIdentifier(schema)}.states
     WHERE thread_id = $1 ORDER BY version`,
    [threadId],
  );
  return rows.map((row) => ({
    version: Number(row.version),
    status: row.status,
    currentNode: row.current_node,
  }));
}

/**
 * What a schema looks like: its tables with their columns, its functions and the migrations it
 * records. Two equal fingerprints mean nothing was created, dropped or migrated in between.
 */
export async function schemaFingerprint(dsn: string, schema: string): Promise<string[]> {
  const columns = await sql<{ item: string }>(
    dsn,
    `SELECT table_name || '.' || column_name || ' ' || data_type AS item
     FROM information_schema.columns WHERE table_schema = $1`,
    [schema],
  );
  const functions = await sql<{ item: string }>(
    dsn,
    `SELECT 'function ' || p.proname AS item FROM pg_proc p
     JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`,
    [schema],
  );
  const versions = columns.some((c) => c.item.startsWith("tenxgraph_schema.version "))
    ? await sql<{ item: string }>(
        dsn,
        `SELECT 'migration ' || version AS item
         FROM ${pg.escapeIdentifier(schema)}.tenxgraph_schema`,
      )
    : [];
  return [...columns, ...functions, ...versions].map((row) => row.item).sort();
}
