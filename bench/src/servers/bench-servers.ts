import pg from "pg";
// The test harness's servers, imported as they are: bench and tests are both dev-only trees
// type-checked by the root tsconfig, and the harness needs nothing of vitest.
import { PostgresServer } from "../../../tests/support/services/postgres-server.js";
import { RedisServer } from "../../../tests/support/services/redis-server.js";

/** The PostgreSQL and Redis servers the bench runs against, given or started here. */
export interface BenchServers {
  postgresDsn: string;
  redisUrl: string;
  /** The server this bench started (its processes can be read for CPU time), if it did. */
  ownPostgres: PostgresServer | undefined;
  /** Whether the bench started Redis (false: TENXGRAPH_BENCH_REDIS_URL was used). */
  ownRedis: boolean;
  /** Stops and deletes the servers started here; given servers are left alone. */
  destroy(): Promise<void>;
}

/**
 * Uses TENXGRAPH_BENCH_POSTGRES_DSN / TENXGRAPH_BENCH_REDIS_URL when set, else starts a private
 * server for each (the test harness's, PostgreSQL with fsync on: durability is what is timed).
 * A server started here also gets pg_stat_statements and pg_walinspect, to count statements and
 * commits; a given server is only read, never reconfigured.
 */
export async function startBenchServers(): Promise<BenchServers> {
  const givenDsn = process.env.TENXGRAPH_BENCH_POSTGRES_DSN;
  const givenRedis = process.env.TENXGRAPH_BENCH_REDIS_URL;
  const [postgres, redis] = await Promise.allSettled([
    givenDsn ? undefined : startObservablePostgres(),
    givenRedis ? undefined : RedisServer.start({ name: "bench" }),
  ]);
  const ownPostgres = postgres.status === "fulfilled" ? postgres.value : undefined;
  const ownRedis = redis.status === "fulfilled" ? redis.value : undefined;
  const destroy = async () => {
    await Promise.all([ownPostgres?.destroy(), ownRedis?.destroy()]);
  };
  if (postgres.status === "rejected" || redis.status === "rejected") {
    await destroy();
    throw postgres.status === "rejected"
      ? postgres.reason
      : (redis as PromiseRejectedResult).reason;
  }
  return {
    postgresDsn: givenDsn ?? ownPostgres!.dsn,
    redisUrl: givenRedis ?? ownRedis!.url,
    ownPostgres,
    ownRedis: ownRedis !== undefined,
    destroy,
  };
}

/**
 * A private server with fsync on, restarted once so that pg_stat_statements is loaded (it must
 * be in shared_preload_libraries), with both statistics extensions created in its database.
 * Statement tracking then stays on for the whole bench, the raw commits included: it costs a few
 * microseconds per statement.
 */
async function startObservablePostgres(): Promise<PostgresServer> {
  const server = await PostgresServer.start({ name: "bench", fsync: true });
  try {
    await runSql(server.dsn, ["ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"]);
    await server.stop();
    await server.start();
    await runSql(server.dsn, [
      "CREATE EXTENSION pg_stat_statements",
      "CREATE EXTENSION pg_walinspect",
      // Statements inside the store's PL/pgSQL functions too, not only the calls.
      "ALTER SYSTEM SET pg_stat_statements.track = 'all'",
      "SELECT pg_reload_conf()",
    ]);
    return server;
  } catch (error) {
    await server.destroy();
    throw error;
  }
}

/** Runs `statements` one by one on a connection of its own. */
export async function runSql(dsn: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  // A server stopping while the client closes must not crash the bench with an 'error' event.
  client.on("error", () => {});
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}
