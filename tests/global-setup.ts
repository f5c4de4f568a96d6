import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { PostgresServer } from "./support/services/postgres-server.js";
import { RedisServer } from "./support/services/redis-server.js";
// For the ProvidedContext keys (postgresDsn, redisUrl) that `project.provide` checks.
import type {} from "./support/services/test-services.js";

/**
 * Runs once before any test file: builds the packages, then starts the PostgreSQL and Redis
 * servers the whole run shares. Test files read them with `testPostgresDsn()` / `testRedisUrl()`
 * (tests/support/services/test-services.ts); child processes find them in the environment
 * variables TENXGRAPH_TEST_POSTGRES_DSN / TENXGRAPH_TEST_REDIS_URL.
 *
 * A developer who already has servers running can set those two variables before running
 * vitest: each one that is set is used as it is, and no server is started (nor stopped) for it.
 * The returned teardown stops and deletes the servers this setup started.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  buildPackages();
  const services = await startSharedServices();
  project.provide("postgresDsn", services.postgresDsn);
  project.provide("redisUrl", services.redisUrl);
  process.env.TENXGRAPH_TEST_POSTGRES_DSN = services.postgresDsn;
  process.env.TENXGRAPH_TEST_REDIS_URL = services.redisUrl;
  return services.destroy;
}

/**
 * Builds the packages once: the README example and the packed-package test use `dist/` exactly
 * as users get it, and building once avoids two files racing on it.
 */
function buildPackages(): void {
  execFileSync("npm", ["run", "build"], {
    cwd: new URL("../", import.meta.url),
    stdio: "inherit",
  });
}

interface SharedServices {
  postgresDsn: string;
  redisUrl: string;
  /** Stops and deletes the servers that were started here (not the developer's own). */
  destroy: () => Promise<void>;
}

/** Something to delete at teardown: a server this setup started. */
interface Destroyable {
  destroy(): Promise<void>;
}

/** Starts both servers side by side; if either fails, the other one is not left running. */
async function startSharedServices(): Promise<SharedServices> {
  const started: Destroyable[] = [];
  const destroy = async () => {
    await Promise.all(started.map((server) => server.destroy()));
  };
  const [postgres, redis] = await Promise.allSettled([
    sharedPostgres(started),
    sharedRedis(started),
  ]);
  if (postgres.status === "rejected" || redis.status === "rejected") {
    await destroy();
    const reasons = [postgres, redis].flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    throw reasons[0];
  }
  return { postgresDsn: postgres.value, redisUrl: redis.value, destroy };
}

async function sharedPostgres(started: Destroyable[]): Promise<string> {
  const given = process.env.TENXGRAPH_TEST_POSTGRES_DSN;
  if (given) return given;
  const server = await PostgresServer.start({ name: "shared" });
  started.push(server);
  return server.dsn;
}

async function sharedRedis(started: Destroyable[]): Promise<string> {
  const given = process.env.TENXGRAPH_TEST_REDIS_URL;
  if (given) return given;
  const server = await RedisServer.start({ name: "shared" });
  started.push(server);
  return server.url;
}
