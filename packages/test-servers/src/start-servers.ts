import { PostgresServer } from "./postgres-server.js";
import { RedisServer } from "./redis-server.js";

/** Options for {@link startServers}. */
export interface StartServersOptions {
  /** Goes into the servers' temporary directory names, to tell them apart when debugging. */
  name: string;
  /** A PostgreSQL server to use as it is instead of starting one (never stopped here). */
  postgresDsn?: string | undefined;
  /** A Redis server to use as it is instead of starting one (never stopped here). */
  redisUrl?: string | undefined;
  /** How PostgreSQL is started, for a caller that configures it further (default: as is). */
  startPostgres?: (name: string) => Promise<PostgresServer>;
}

/** A PostgreSQL and a Redis server, each given or started by {@link startServers}. */
export interface ServerPair {
  postgresDsn: string;
  redisUrl: string;
  /** The PostgreSQL server started here; undefined when one was given. */
  postgres: PostgresServer | undefined;
  /** The Redis server started here; undefined when one was given. */
  redis: RedisServer | undefined;
  /** Stops and deletes the servers started here; given servers are left alone. */
  destroy(): Promise<void>;
}

/**
 * Starts a PostgreSQL and a Redis server side by side, except the ones given. If either fails
 * to start, the other one is not left running, and the first failure is thrown.
 *
 * @example
 * const servers = await startServers({ name: "bench", redisUrl: process.env.MY_REDIS });
 * try { … servers.postgresDsn … } finally { await servers.destroy(); }
 */
export async function startServers(options: StartServersOptions): Promise<ServerPair> {
  const { name, postgresDsn, redisUrl } = options;
  const startPostgres = options.startPostgres ?? ((n: string) => PostgresServer.start({ name: n }));
  const [postgres, redis] = await Promise.allSettled([
    postgresDsn ? undefined : startPostgres(name),
    redisUrl ? undefined : RedisServer.start({ name }),
  ]);
  const ownPostgres = postgres.status === "fulfilled" ? postgres.value : undefined;
  const ownRedis = redis.status === "fulfilled" ? redis.value : undefined;
  const destroy = async () => {
    await Promise.all([ownPostgres?.destroy(), ownRedis?.destroy()]);
  };
  if (postgres.status === "rejected" || redis.status === "rejected") {
    await destroy();
    throw [postgres, redis].flatMap((r) => (r.status === "rejected" ? [r.reason] : []))[0];
  }
  return {
    postgresDsn: postgresDsn ?? ownPostgres!.dsn,
    redisUrl: redisUrl ?? ownRedis!.url,
    postgres: ownPostgres,
    redis: ownRedis,
    destroy,
  };
}
