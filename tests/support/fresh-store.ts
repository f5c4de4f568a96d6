/**
 * The test-process side of store-spec.ts: a new, empty store for one test, and its removal.
 * Reads the shared servers through vitest's injected context, so only test files import it.
 */
import { join } from "node:path";
import pg from "pg";
import { freshSchema } from "../postgres/pg-store.js";
import { testPostgresDsn, testRedisUrl } from "./services/test-services.js";
import type { StoreKind, StoreSpec } from "./store-spec.js";

/** How long dropping a test's schema may wait for a lock before it fails the cleanup. */
const DROP_LOCK_TIMEOUT = "10s";

/**
 * An empty store of `kind` that no other test touches: a SQLite file in `dir` (which the caller
 * owns and removes), or a schema of its own on the shared PostgreSQL with the shared Redis in
 * front (the cache's keys carry the schema, so tests never read each other's cache).
 */
export function freshStore(kind: StoreKind, name: string, dir: string): StoreSpec {
  if (kind === "sqlite") return { kind, path: join(dir, "threads.db") };
  return {
    kind,
    dsn: testPostgresDsn(),
    schema: freshSchema(schemaPrefix(name)),
    redisUrl: testRedisUrl(),
  };
}

/**
 * Drops a PostgreSQL test's schema, so repeated runs on a developer's server do not pile up
 * schemas (a SQLite file goes with its folder). Call it once every process on the store is gone:
 * a lock still held then would be a leak worth failing on, hence no silent catch.
 */
export async function dropStore(spec: StoreSpec): Promise<void> {
  if (spec.kind !== "postgres") return;
  const client = new pg.Client({ connectionString: spec.dsn });
  await client.connect();
  try {
    await client.query(`SET lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
    await client.query(`DROP SCHEMA IF EXISTS "${spec.schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A schema name is a plain identifier of at most 63 bytes; freshSchema adds 11 characters. */
function schemaPrefix(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .replace(/^(?=[^a-z_])/, "t_")
    .slice(0, 40);
}
