import { BaseStore } from "@tenxgraph/core/store";
import type {
  BaseStoreOptions,
  ScanPage,
  StoreItem,
  StoreRow,
  StoreRowWrite,
} from "@tenxgraph/core/store";
import type Database from "better-sqlite3";
import { keepAlive } from "./keep-alive.js";
import { mapSqliteError } from "./map-error.js";
import { openDatabase, type ConnectionSettings } from "./open-database.js";
import { checkOptions } from "./sqlite-checkpointer.js";

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions extends BaseStoreOptions {
  /** The database file; the checkpointer's may be shared. Default `./.tenxgraph/threads.db`. */
  path?: string;
  /** As `SqliteCheckpointer`'s: `"FULL"` (default) survives power loss. */
  synchronous?: "FULL" | "NORMAL";
  /** How long a write waits for another process's write lock. Default 5000 ms. */
  busyTimeoutMs?: number;
}

interface ItemRow {
  namespace: string;
  key: string;
  value_json: string;
  vectors_json?: string;
  created_at: number;
  updated_at: number;
}

/** Whether an item's namespace is `@prefix` or lies under it (`''`: every namespace). */
const UNDER = `(@prefix = '' OR namespace = @prefix
  OR substr(namespace, 1, length(@prefix) + 1) = @prefix || '.')`;

const SQL = {
  get: `SELECT namespace, key, value_json, created_at, updated_at FROM store_items
    WHERE namespace = ? AND key = ?`,
  // One statement, so SQLite's write lock covers reading the last write_seq and writing.
  put: `INSERT INTO store_items
      (namespace, key, value_json, vectors_json, created_at, updated_at, write_seq)
    VALUES (@namespace, @key, @value, @vectors, @now, @now, (SELECT coalesce(max(write_seq), 0) + 1 FROM store_items))
    ON CONFLICT (namespace, key) DO UPDATE SET value_json = excluded.value_json,
      vectors_json = excluded.vectors_json, updated_at = excluded.updated_at,
      write_seq = excluded.write_seq`,
  delete: `DELETE FROM store_items WHERE namespace = ? AND key = ?`,
  scan: `SELECT namespace, key, value_json, created_at, updated_at FROM store_items
    WHERE ${UNDER} ORDER BY write_seq DESC LIMIT @limit OFFSET @offset`,
  scanWithVectors: `SELECT namespace, key, value_json, vectors_json, created_at, updated_at
    FROM store_items WHERE ${UNDER} ORDER BY write_seq DESC`,
  namespaces: `SELECT DISTINCT namespace FROM store_items WHERE ${UNDER}`,
} as const;

type Statements = Record<keyof typeof SQL, Database.Statement>;

/**
 * The long-term store in a SQLite file (table `store_items`, made by the file's migrations):
 * several processes may share it, and the checkpointer's file may hold it too. Search filters
 * and ranks in this process over the items under the prefix (a plain scan).
 *
 * @example
 * const store = new SqliteStore({ path: "./.tenxgraph/threads.db" });
 * const app = graph.compile({ checkpointer: new SqliteCheckpointer(), store });
 */
export class SqliteStore extends BaseStore {
  readonly #settings: Readonly<ConnectionSettings>;
  #connection: { db: Database.Database; sql: Statements } | undefined;

  constructor(options: SqliteStoreOptions = {}) {
    super(options);
    this.#settings = Object.freeze(checkOptions(options, "SqliteStore"));
  }

  /** The database file. */
  get path(): string {
    return this.#settings.path;
  }

  /** Opens (creating or migrating) the file; calls do it on first use. */
  async setup(): Promise<void> {
    this.#use("setup", () => undefined);
  }

  async close(): Promise<void> {
    this.#connection?.db.close();
    this.#connection = undefined;
  }

  protected async readItem(namespace: string[], key: string): Promise<StoreItem | null> {
    return this.#use("get", ({ sql }) => {
      const row = sql.get.get(namespace.join("."), key) as ItemRow | undefined;
      return row ? toRow(row) : null;
    });
  }

  protected async writeItem(write: StoreRowWrite): Promise<void> {
    const value = JSON.stringify(write.value);
    const vectors = JSON.stringify(write.vectors);
    this.#use("put", ({ sql }) =>
      sql.put.run({
        namespace: write.namespace.join("."),
        key: write.key,
        value,
        vectors,
        now: Date.now(),
      }),
    );
  }

  protected async removeItem(namespace: string[], key: string): Promise<void> {
    this.#use("delete", ({ sql }) => sql.delete.run(namespace.join("."), key));
  }

  protected async scanItems(
    prefix: string[],
    page: ScanPage,
    withVectors: boolean,
  ): Promise<StoreRow[]> {
    return this.#use("search", ({ sql }) => {
      const rows = (
        withVectors
          ? sql.scanWithVectors.all({ prefix: prefix.join(".") })
          : sql.scan.all({
              prefix: prefix.join("."),
              limit: page?.limit ?? -1,
              offset: page?.offset ?? 0,
            })
      ) as ItemRow[];
      const found = rows.map(toRow);
      return withVectors && page ? found.slice(page.offset, page.offset + page.limit) : found;
    });
  }

  protected async namespacesUnder(prefix: string[]): Promise<string[][]> {
    return this.#use("listNamespaces", ({ sql }) =>
      (sql.namespaces.all({ prefix: prefix.join(".") }) as { namespace: string }[]).map((row) =>
        row.namespace.split("."),
      ),
    );
  }

  /** Runs `body` on the open file; engine failures become errors naming the file. */
  #use<T>(operation: string, body: (connection: { sql: Statements }) => T): T {
    try {
      this.#connection ??= this.#connect();
      return body(this.#connection);
    } catch (error) {
      throw mapSqliteError(`store.${operation}`, this.#settings.path, error);
    }
  }

  #connect(): { db: Database.Database; sql: Statements } {
    const db = openDatabase(this.#settings);
    const sql = Object.fromEntries(
      Object.entries(SQL).map(([name, text]) => [name, keepAlive(db.prepare(text))]),
    ) as Statements;
    return { db, sql };
  }
}

function toRow(row: ItemRow): StoreRow {
  return {
    namespace: row.namespace.split("."),
    key: row.key,
    value: JSON.parse(row.value_json) as StoreRow["value"],
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    vectors: row.vectors_json ? (JSON.parse(row.vectors_json) as number[][]) : [],
  };
}
