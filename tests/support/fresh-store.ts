/**
 * The test-process side of store-spec.ts: a new, empty store for one test, and its removal.
 * Reads the shared servers through vitest's injected context unless given servers of its own,
 * so only test files (and the chaos run, which passes its servers) import it.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { dropSchema, freshSchema } from "../../packages/postgres/src/support/pg-store.js";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import type { StoreKind, StoreSpec } from "./store-spec.js";

const LOCK_POLL_MS = 25;

/** The PostgreSQL and Redis servers a PostgreSQL store lives on. */
export interface StoreServers {
  postgresDsn: string;
  redisUrl: string;
}

/**
 * An empty store of `kind` that no other test touches: a SQLite file in `dir` (which the caller
 * owns and removes), or a schema of its own on PostgreSQL with Redis in front (each schema is a
 * store with an id of its own, which names its keys in Redis, so tests never read each other's
 * cache). The servers are the suite's shared ones unless `servers` names others (the chaos run,
 * outside vitest, starts its own).
 */
export function freshStore(
  kind: StoreKind,
  name: string,
  dir: string,
  servers?: StoreServers,
): StoreSpec {
  if (kind === "sqlite") return { kind, path: join(dir, "threads.db") };
  return {
    kind,
    dsn: servers?.postgresDsn ?? testPostgresDsn(),
    schema: freshSchema(schemaPrefix(name)),
    redisUrl: servers?.redisUrl ?? testRedisUrl(),
  };
}

/**
 * Drops a PostgreSQL test's schema, so repeated runs on a developer's server do not pile up
 * schemas (a SQLite file goes with its folder). Call it once every process on the store is gone:
 * a lock still held then would be a leak worth failing on, hence no silent catch.
 */
export async function dropStore(spec: StoreSpec): Promise<void> {
  if (spec.kind === "postgres") await dropSchema(spec.dsn, spec.schema);
}

/** Locks on a PostgreSQL store's tables held by sessions other than the asking one. */
const LOCKS_ON_SCHEMA = `
  SELECT c.relname AS "table", l.mode, l.pid, a.state, a.application_name AS app
  FROM pg_locks l
  JOIN pg_class c ON c.oid = l.relation
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE n.nspname = $1 AND l.pid <> pg_backend_pid()`;

/**
 * Waits until no session holds a lock on the store's tables (PostgreSQL; nothing to wait for on
 * SQLite), or fails after `timeoutMs` naming the locks. Call it when no process of the test runs:
 * a killed process's open transaction holds its locks only until PostgreSQL sees the connection
 * drop and rolls it back, so anything left past that would block the next process.
 */
export async function waitUntilUnlocked(spec: StoreSpec, timeoutMs = 10_000): Promise<void> {
  if (spec.kind !== "postgres") return;
  const client = new pg.Client({ connectionString: spec.dsn });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query(LOCKS_ON_SCHEMA, [spec.schema]);
      if (rows.length === 0) return;
      if (Date.now() > deadline) {
        const held = rows.map((r) => JSON.stringify(r)).join("\n");
        throw new Error(
          `locks on schema ${spec.schema} still held after ${timeoutMs} ms:\n${held}`,
        );
      }
      await sleep(LOCK_POLL_MS);
    }
  } finally {
    await client.end();
  }
}

/** A schema name is a plain identifier of at most 63 bytes; freshSchema adds 11 characters. */
function schemaPrefix(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .replace(/^(?=[^a-z_])/, "t_")
    .slice(0, 40);
}
