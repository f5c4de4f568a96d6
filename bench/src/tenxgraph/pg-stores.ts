import { PgCheckpointer } from "@tenxgraph/postgres";
import type { BenchServers } from "../servers/bench-servers.js";
import type { Workload } from "../workload.js";
import type { WarningLog } from "./warning-log.js";

/** PostgreSQL alone, or with Redis as the hot copy of each thread. */
export type PgStore = "postgres" | "postgres+redis";

/** A workload on PgCheckpointer: the loop's shape and the store. */
export interface PgWorkload extends Workload {
  store: PgStore;
}

/** A workload's name in schema names: `postgres_50x4`, `postgres_redis_50x4`. */
export function pgLabel({ store, turns, toolsPerTurn }: PgWorkload): string {
  return `${store.replace("+", "_")}_${turns}x${toolsPerTurn}`;
}

/**
 * A PgCheckpointer on the bench's servers, its tables in `schema`, with default pool and
 * timeouts. Warnings (a Redis outage, a retry) go to `warnings`: a store that quietly fell back
 * to PostgreSQL would be timing something else.
 */
export function openPgStore(
  servers: BenchServers,
  store: PgStore,
  schema: string,
  warnings: WarningLog,
): PgCheckpointer {
  return new PgCheckpointer({
    postgresDsn: servers.postgresDsn,
    ...(store === "postgres+redis" ? { redisUrl: servers.redisUrl } : {}),
    schema,
    logger: warnings.logger,
  });
}
