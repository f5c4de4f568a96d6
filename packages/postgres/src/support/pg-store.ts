import { randomBytes } from "node:crypto";
import pg from "pg";
import { PgCheckpointer } from "@tenxgraph/postgres";
import type { PgCheckpointerOptions } from "@tenxgraph/postgres";
import { silentLogger } from "@tenxgraph/core";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";

/** A schema name no other test file or run uses, so each file starts from an empty store. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`;
}

/**
 * A `PgCheckpointer` on the suite's shared servers: with the shared Redis unless `redis: false`,
 * quiet unless a logger is given.
 */
export function sharedStore(
  schema: string,
  options: Partial<PgCheckpointerOptions> & { redis?: boolean } = {},
): PgCheckpointer {
  const { redis = true, ...rest } = options;
  return new PgCheckpointer({
    postgresDsn: testPostgresDsn(),
    ...(redis ? { redisUrl: testRedisUrl() } : {}),
    schema,
    logger: silentLogger,
    ...rest,
  });
}

/** How long dropping a test's schema may wait for a lock before it fails the cleanup. */
const DROP_LOCK_TIMEOUT = "10s";

/**
 * Drops a test's schema, so repeated runs on a developer's server do not pile up schemas. Call
 * it once every process on the store is gone: a lock still held then would be a leak worth
 * failing on, hence no silent catch.
 */
export async function dropSchema(dsn: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`SET lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
