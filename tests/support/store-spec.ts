/**
 * Where a test's threads live, as plain JSON: the test process picks the store, hands this
 * description to its child processes (in their params), and every process opens the same store
 * from it. Suites that run in real processes use it to run once per store without copying code.
 *
 * Safe to import in a child process: nothing here reads vitest's injected context (see
 * fresh-store.ts for the test-process side that creates and drops stores).
 */
import type { Checkpointer } from "@tenxgraph/core/storage";
import type { Logger } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

/** A SQLite file shared by every process of a test. */
export interface SqliteStoreSpec {
  kind: "sqlite";
  path: string;
}

/** A PostgreSQL schema shared by every process of a test, with Redis in front when given. */
export interface PostgresStoreSpec {
  kind: "postgres";
  dsn: string;
  schema: string;
  redisUrl?: string;
}

export type StoreSpec = SqliteStoreSpec | PostgresStoreSpec;

export type StoreKind = StoreSpec["kind"];

/** Every store a cross-process suite runs on, in the order the reports list them. */
export const STORE_KINDS: readonly StoreKind[] = ["sqlite", "postgres"];

export interface OpenStoreOptions {
  /** Where the store's own warnings go (PgCheckpointer: Redis outages, retries). */
  logger?: Logger;
}

/** A checkpointer on the store `spec` describes. The caller closes it. */
export function openStore(spec: StoreSpec, options: OpenStoreOptions = {}): Checkpointer {
  switch (spec.kind) {
    case "sqlite":
      return new SqliteCheckpointer({ path: spec.path });
    case "postgres":
      return new PgCheckpointer({
        postgresDsn: spec.dsn,
        schema: spec.schema,
        ...(spec.redisUrl === undefined ? {} : { redisUrl: spec.redisUrl }),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
  }
}

/**
 * The same store without its cache: what is committed, read without touching the cache (a read
 * through it may fill it, which an observer must not do to the store under test).
 */
export function durableOnly(spec: StoreSpec): StoreSpec {
  if (spec.kind !== "postgres") return spec;
  const { redisUrl: _cache, ...postgresOnly } = spec;
  return postgresOnly;
}

/** How test names and failure messages call the store. */
export function storeLabel(kind: StoreKind): string {
  return kind === "sqlite" ? "SQLite" : "PostgreSQL + Redis";
}

/** Every store with its label, for `describe.each(STORES)("on $label", ({ kind }) => …)`. */
export const STORES: readonly { kind: StoreKind; label: string }[] = STORE_KINDS.map((kind) => ({
  kind,
  label: storeLabel(kind),
}));
