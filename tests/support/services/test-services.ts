import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createDatabase } from "./postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The suite's shared PostgreSQL server (tests/global-setup.ts), as a superuser DSN. */
    postgresDsn: string;
    /** The suite's shared Redis server (tests/global-setup.ts). */
    redisUrl: string;
  }
}

/** The DSN of the PostgreSQL server shared by the whole test run (superuser, `postgres` database). */
export function testPostgresDsn(): string {
  return provided("postgresDsn", "TENXGRAPH_TEST_POSTGRES_DSN");
}

/** The URL of the Redis server shared by the whole test run. */
export function testRedisUrl(): string {
  return provided("redisUrl", "TENXGRAPH_TEST_REDIS_URL");
}

/**
 * Creates an empty database on the shared PostgreSQL server and returns its DSN, for a test
 * that needs a schema of its own. The name is `prefix` plus a random suffix, so parallel test
 * files and repeated runs never collide.
 */
export async function freshDatabase(prefix: string): Promise<string> {
  const cleaned = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 40);
  const name = `${/^[a-z_]/.test(cleaned) ? "" : "t_"}${cleaned}_${randomBytes(6).toString("hex")}`;
  return createDatabase(testPostgresDsn(), name);
}

function provided(key: "postgresDsn" | "redisUrl", envVariable: string): string {
  const value = inject(key);
  if (!value) {
    throw new Error(
      `no shared test server: inject("${key}") is empty. tests/global-setup.ts provides it ` +
        `(or set ${envVariable} to use a server of your own); is this file run by vitest with ` +
        `the repository's vitest.config.ts?`,
    );
  }
  return value;
}
