import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { createDatabase } from "./postgres-server.js";
import { startServers } from "./start-servers.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The suite's shared PostgreSQL server (shareTestServers, from tests/global-setup.ts), as a superuser DSN. */
    postgresDsn: string;
    /** The suite's shared Redis server (shareTestServers, from tests/global-setup.ts). */
    redisUrl: string;
  }
}

/** The environment variables that name the shared servers, for child processes and developers. */
const POSTGRES_DSN_VARIABLE = "TENXGRAPH_TEST_POSTGRES_DSN";
const REDIS_URL_VARIABLE = "TENXGRAPH_TEST_REDIS_URL";

/**
 * For a vitest global setup: starts the PostgreSQL and Redis servers the whole run shares and
 * hands them to the test files (`testPostgresDsn()` / `testRedisUrl()`) and to their child
 * processes (the environment variables TENXGRAPH_TEST_POSTGRES_DSN / TENXGRAPH_TEST_REDIS_URL).
 *
 * A developer who already has servers running can set those two variables before running
 * vitest: each one that is set is used as it is, and no server is started (nor stopped) for it.
 * Resolves with the teardown, which stops and deletes the servers started here.
 */
export async function shareTestServers(project: TestProject): Promise<() => Promise<void>> {
  const servers = await startServers({
    name: "shared",
    postgresDsn: process.env[POSTGRES_DSN_VARIABLE],
    redisUrl: process.env[REDIS_URL_VARIABLE],
  });
  project.provide("postgresDsn", servers.postgresDsn);
  project.provide("redisUrl", servers.redisUrl);
  process.env[POSTGRES_DSN_VARIABLE] = servers.postgresDsn;
  process.env[REDIS_URL_VARIABLE] = servers.redisUrl;
  return servers.destroy;
}

/** The DSN of the PostgreSQL server shared by the whole test run (superuser, `postgres` database). */
export function testPostgresDsn(): string {
  return provided("postgresDsn", POSTGRES_DSN_VARIABLE);
}

/** The URL of the Redis server shared by the whole test run. */
export function testRedisUrl(): string {
  return provided("redisUrl", REDIS_URL_VARIABLE);
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
