import pg from "pg";
// The test harness's servers (packages/test-servers, private): the same ones the tests start.
import { PostgresServer, startServers } from "@tenxgraph/test-servers";

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
  const servers = await startServers({
    name: "bench",
    postgresDsn: process.env.TENXGRAPH_BENCH_POSTGRES_DSN,
    redisUrl: process.env.TENXGRAPH_BENCH_REDIS_URL,
    startPostgres: startObservablePostgres,
  });
  return {
    postgresDsn: servers.postgresDsn,
    redisUrl: servers.redisUrl,
    ownPostgres: servers.postgres,
    ownRedis: servers.redis !== undefined,
    destroy: servers.destroy,
  };
}

/**
 * A private server with fsync on, restarted once so that pg_stat_statements is loaded (it must
 * be in shared_preload_libraries), with both statistics extensions created in its database.
 * Statement tracking then stays on for the whole bench, the raw commits included: it costs a few
 * microseconds per statement.
 */
export async function startObservablePostgres(name: string): Promise<PostgresServer> {
  const server = await PostgresServer.start({ name, fsync: true });
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
