import { jsonLogger } from "@tenxgraph/core";
import type { Logger } from "@tenxgraph/core";
import type { HistoryOptions } from "@tenxgraph/core/storage";
import type { DatabaseSettings } from "./connection/database.js";
import type { ThreadCacheSettings } from "./cache/thread-cache.js";

/**
 * Options of {@link PgCheckpointer}. From `HistoryOptions`: `keepVersions` (each step deletes,
 * in its own transaction, the state rows it pushes out of the newest that many; their message
 * rows stay until `pruneVersions`) and `deleteExpiredEveryMs` (a timer that runs
 * `deleteExpiredThreads`).
 */
export interface PgCheckpointerOptions extends HistoryOptions {
  /** `postgres://user:password@host:5432/database`: where threads live durably. */
  postgresDsn: string;
  /**
   * `redis://host:6379/0`: the hot cache of thread state. Optional; without it every read goes
   * to PostgreSQL and `durableCheckpointEveryStep: false` writes nothing between terminal points.
   */
  redisUrl?: string;
  /** How long an idle thread stays in Redis. Default 86 400 (24 h). */
  cacheTtlSeconds?: number;
  /**
   * What every Redis key of this store starts with: the store's name in Redis. Default
   * `tenxgraph:<store id>:`, where the store id is a random id that the first `setup()` makes
   * and keeps in the schema (table `tenxgraph_store`), so every worker on the store finds the
   * same keys and no other store does, even one whose DSN names the same database and schema on
   * another server. Set it to give keys a name of your own (say, for a Redis ACL key pattern);
   * it must then name this store alone: two stores with one prefix would share their keys, and
   * a store made anew (its schema dropped) must not take over the old one's prefix while its
   * keys live (`cacheTtlSeconds`). 1 to 100 printable ASCII characters, no spaces.
   *
   * @example
   * new PgCheckpointer({ postgresDsn, redisUrl, cacheKeyPrefix: "support-agent:prod:" });
   */
  cacheKeyPrefix?: string;
  /** The PostgreSQL schema of the tables, created if missing. Default `"public"`. */
  schema?: string;
  /** The connection pool of this process. */
  pool?: {
    /** Connections at most. Default 10: each running step holds one for one statement. */
    max?: number;
    /** An unused connection is closed after this long. Default 30 000 ms. */
    idleTimeoutMs?: number;
    /** Give up connecting after this long. Default 5 000 ms. */
    connectionTimeoutMs?: number;
  };
  /**
   * The server cancels a statement running longer than this, and the client gives up one second
   * later when the server does not answer at all (frozen, or cut off by the network).
   * Default 10 000 ms.
   */
  statementTimeoutMs?: number;
  /** A statement waiting longer than this for a row lock fails. Default 5 000 ms. */
  lockTimeoutMs?: number;
  /**
   * Tries of a call whose connection failed, with delays doubling from `firstDelayMs`.
   * Default 6 tries from 100 ms (about 3 s in all, enough to ride out a server restart).
   */
  retry?: { attempts?: number; firstDelayMs?: number };
  /**
   * Prepare each statement once per connection and then only send its values, which spares the
   * server a parse and a plan per call (about 15% of a step here). Default `true`. Set `false`
   * behind a pooler that cannot keep named statements (PgBouncer before 1.21 in transaction mode).
   */
  preparedStatements?: boolean;
  /** Where warnings go (Redis outages, retries). Default: JSON lines on stderr from `warn`. */
  logger?: Logger;
}

export interface ResolvedSettings {
  database: DatabaseSettings;
  /** `keyPrefix` is `undefined` unless set: by default `setup()` names it by the store id. */
  cache: (Omit<ThreadCacheSettings, "keyPrefix"> & { keyPrefix: string | undefined }) | undefined;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** Printable ASCII without spaces, so a key reads the same in logs, `redis-cli` and ACLs. */
const KEY_PREFIX = /^[\x21-\x7e]{1,100}$/;

/** Checks the options and fills in the defaults; a bad value throws a `TypeError` naming it. */
export function resolveOptions(options: PgCheckpointerOptions): ResolvedSettings {
  const fail = (problem: string): never => {
    // A TypeError, as ever, with a published code so isTenxgraphError recognises it.
    throw Object.assign(new TypeError(`PgCheckpointer: ${problem}`), { code: "CONFIG_001" });
  };
  if (typeof options !== "object" || options === null) fail("options must be an object");
  const { postgresDsn, redisUrl, schema = "public", logger = jsonLogger() } = options;
  if (typeof postgresDsn !== "string" || !/^postgres(ql)?:\/\//.test(postgresDsn)) {
    fail(`postgresDsn must be a postgres:// URL, got ${describe(postgresDsn)}`);
  }
  if (redisUrl !== undefined) requireRedisUrl(redisUrl, fail);
  if (typeof schema !== "string" || !SCHEMA_NAME.test(schema)) {
    fail(`schema must be a plain identifier (letters, digits, _), got ${describe(schema)}`);
  }
  const whole = (name: string, value: number | undefined, fallback: number, min: number) => {
    const resolved = value ?? fallback;
    if (!Number.isInteger(resolved) || resolved < min) {
      fail(`${name} must be a whole number >= ${min}, got ${describe(value)}`);
    }
    return resolved;
  };
  const { cacheKeyPrefix } = options;
  if (
    cacheKeyPrefix !== undefined &&
    (typeof cacheKeyPrefix !== "string" || !KEY_PREFIX.test(cacheKeyPrefix))
  ) {
    fail(
      `cacheKeyPrefix must be 1 to 100 printable ASCII characters without spaces, got ` +
        describe(cacheKeyPrefix),
    );
  }
  const { preparedStatements = true } = options;
  if (typeof preparedStatements !== "boolean") {
    fail(`preparedStatements must be true or false, got ${describe(preparedStatements)}`);
  }
  const location = redact(postgresDsn);
  return {
    database: {
      dsn: postgresDsn,
      schema,
      location,
      pool: {
        max: whole("pool.max", options.pool?.max, 10, 1),
        idleTimeoutMs: whole("pool.idleTimeoutMs", options.pool?.idleTimeoutMs, 30_000, 0),
        connectionTimeoutMs: whole(
          "pool.connectionTimeoutMs",
          options.pool?.connectionTimeoutMs,
          5_000,
          0,
        ),
      },
      statementTimeoutMs: whole("statementTimeoutMs", options.statementTimeoutMs, 10_000, 0),
      lockTimeoutMs: whole("lockTimeoutMs", options.lockTimeoutMs, 5_000, 0),
      retry: {
        attempts: whole("retry.attempts", options.retry?.attempts, 6, 1),
        firstDelayMs: whole("retry.firstDelayMs", options.retry?.firstDelayMs, 100, 0),
      },
      preparedStatements,
      logger,
    },
    cache:
      redisUrl === undefined
        ? undefined
        : {
            url: redisUrl,
            keyPrefix: cacheKeyPrefix,
            ttlSeconds: whole("cacheTtlSeconds", options.cacheTtlSeconds, 86_400, 1),
            logger,
          },
  };
}

/** The DSN without its password, for messages. */
function redact(dsn: string): string {
  try {
    const url = new URL(dsn);
    url.password = "";
    url.search = "";
    return url.toString();
  } catch {
    return "the PostgreSQL database";
  }
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * A Redis URL the client can use, or `fail` naming the problem (without the password): a
 * malformed one would otherwise fail inside the Redis client, later and without a code.
 */
function requireRedisUrl(redisUrl: unknown, fail: (problem: string) => never): void {
  if (typeof redisUrl !== "string" || !/^rediss?:\/\//.test(redisUrl)) {
    fail(`redisUrl must be a redis:// or rediss:// URL, got ${describe(redisUrl)}`);
  }
  let url: URL;
  try {
    url = new URL(redisUrl as string);
  } catch {
    return fail(
      "redisUrl is not a valid URL (check for an unescaped '@', ':' or '/' in the password)",
    );
  }
  if (url.hostname === "") fail("redisUrl names no host");
}
