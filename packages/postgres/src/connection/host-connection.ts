import pg from "pg";
import { mapPgError } from "./pg-errors.js";

/**
 * For hosts that keep tables of their own beside the store's (the server's background runs):
 * a pool with the store's safety settings, named migration steps under an advisory lock, and
 * the store's translation of `pg` failures into coded tenxgraph errors.
 */
export interface HostPoolOptions {
  /** `postgres://user:password@host:5432/database`. */
  postgresDsn: string;
  /** Connections at most. Default 10. */
  max?: number;
  /** Give up connecting after this long. Default 5 000 ms. */
  connectionTimeoutMs?: number;
  /** The client gives up on a statement the server does not answer. Default 10 000 ms. */
  queryTimeoutMs?: number;
  /** Named in `pg_stat_activity`. Default `"tenxgraph"`. */
  applicationName?: string;
}

/**
 * A `pg` pool that cannot hang or crash its process: a host cut off from PostgreSQL finds out
 * within the timeouts, and a connection the server ends (restart, failover, idle timeout) is
 * dropped from the pool instead of being an unhandled 'error'.
 */
export function createHostPool(options: HostPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.postgresDsn,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    keepAlive: true,
    application_name: options.applicationName ?? "tenxgraph",
  });
  // The pool drops the broken connection by itself and the next query opens a new one.
  pool.on("error", () => {});
  return pool;
}

/** One migration step: its name (for messages) and the statements that make it. */
export interface MigrationStep {
  name: string;
  statements: readonly string[];
}

/**
 * Runs `body` holding the session-level advisory lock `lockKey`, so that N processes starting
 * at once on an empty database migrate one after the other: the holder migrates, the others
 * wait, then find nothing to do. A holder that dies frees the lock with its session; a session
 * that could not unlock is closed rather than pooled.
 */
export async function withMigrationLock<T>(
  pool: pg.Pool,
  lockKey: number,
  body: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [lockKey]);
    try {
      return await body(client);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [lockKey]).catch(() => {
        broken = true;
      });
    }
  } finally {
    client.release(broken);
  }
}

/**
 * Applies the steps `versionTable` (one row: the number of steps applied) does not record yet,
 * in order, in one transaction with the new count: a migration never half-applies. A step's
 * position in `steps` is its version, so steps are only ever appended.
 */
export async function applyMigrationSteps(
  client: pg.PoolClient,
  versionTable: string,
  steps: readonly MigrationStep[],
): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS ${versionTable} (version integer NOT NULL)`);
    const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${versionTable}`);
    const current = rows[0]?.version ?? 0;
    for (const step of steps.slice(current)) {
      for (const statement of step.statements) await client.query(statement);
    }
    if (rows.length === 0) {
      await client.query(`INSERT INTO ${versionTable} VALUES ($1)`, [steps.length]);
    } else if (current < steps.length) {
      await client.query(`UPDATE ${versionTable} SET version = $1`, [steps.length]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/**
 * A `pg` failure of `operation` as a coded tenxgraph error naming the problem and the database
 * (a storage failure, `STORAGE_FAILURE_001`, unless it is tenxgraph's already), the original as
 * `cause`.
 */
export function hostDatabaseError(operation: string, pool: pg.Pool, error: unknown): Error {
  return mapPgError(operation, poolLocation(pool), error);
}

/** The pool's database without password or parameters, for messages. */
function poolLocation(pool: pg.Pool): string {
  try {
    const url = new URL(String((pool.options as { connectionString?: string }).connectionString));
    url.password = "";
    url.search = "";
    return url.toString();
  } catch {
    return "the PostgreSQL database";
  }
}
