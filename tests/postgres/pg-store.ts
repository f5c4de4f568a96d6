import { randomBytes } from "node:crypto";
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
