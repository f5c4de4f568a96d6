import { StorageSchemaError } from "@tenxgraph/core/storage";
import type pg from "pg";
import type { Database } from "../connection/database.js";
import { quoteIdentifier } from "../connection/database.js";
import { installFunctions } from "./install-functions.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, OWN_TABLES } from "./migrations.js";

/**
 * Creates or migrates the schema, then installs the functions whose text changed
 * (install-functions.ts), in one transaction under a transaction-level advisory lock, so
 * processes starting together neither race nor see a half-made schema, and returns the store's
 * id (made by the first setup, see migration 3). Refuses, before writing anything, a schema
 * newer than this code (`STORAGE_SCHEMA_001`) and tables of ours made by someone else
 * (`STORAGE_SCHEMA_002`).
 */
export async function migrate(db: Database, schema: string): Promise<string> {
  // Repeatable: a transaction cut off before COMMIT applied nothing, and one that committed
  // leaves nothing to do the second time.
  return db.transaction("setup", "repeatable", async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`tenxgraph:${schema}`]);
    await createSchemaIfMissing(client, schema);
    const applied = await appliedVersion(client, db.location, schema);
    for (let version = applied + 1; version <= LATEST_SCHEMA_VERSION; version++) {
      for (const statement of MIGRATIONS[version - 1]!.up) await client.query(statement);
      await client.query("INSERT INTO tenxgraph_schema (version) VALUES ($1)", [version]);
    }
    await installFunctions(client, schema);
    return storeId(client);
  });
}

/**
 * The id migration 3 made. Should its row have been deleted, a new id is made: that only leaves
 * the old Redis keys unused until they expire, where guessing any other id could collide.
 */
async function storeId(client: pg.PoolClient): Promise<string> {
  const { rows } = await client.query<{ store_id: string }>("SELECT store_id FROM tenxgraph_store");
  if (rows[0]) return rows[0].store_id;
  const made = await client.query<{ store_id: string }>(
    "INSERT INTO tenxgraph_store (store_id) VALUES (gen_random_uuid()::text) RETURNING store_id",
  );
  return made.rows[0]!.store_id;
}

async function createSchemaIfMissing(client: pg.PoolClient, schema: string): Promise<void> {
  const { rowCount } = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [
    schema,
  ]);
  if (rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
}

/** The newest applied migration, 0 for an empty schema. */
async function appliedVersion(
  client: pg.PoolClient,
  location: string,
  schema: string,
): Promise<number> {
  const { rows: tables } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1",
    [schema],
  );
  const names = new Set(tables.map((table) => table.name));
  const where = `${location} (schema '${schema}')`;
  if (!names.has("tenxgraph_schema")) {
    const ours = OWN_TABLES.filter((table) => names.has(table));
    if (ours.length > 0) {
      const detail =
        `it has tables named like tenxgraph's (${ours.join(", ")}) but no tenxgraph_schema ` +
        `table, so they belong to another program; use another schema (the 'schema' option)`;
      throw new StorageSchemaError("STORAGE_SCHEMA_002", where, detail);
    }
    return 0;
  }
  const { rows } = await client.query<{ version: number | null }>(
    "SELECT max(version) AS version FROM tenxgraph_schema",
  );
  const version = rows[0]?.version ?? 0;
  if (version > LATEST_SCHEMA_VERSION) {
    const detail =
      `its schema is at version ${version}, newer than this @tenxgraph/postgres understands ` +
      `(${LATEST_SCHEMA_VERSION}); upgrade @tenxgraph/postgres`;
    throw new StorageSchemaError("STORAGE_SCHEMA_001", where, detail);
  }
  return version;
}
