import { BaseStore } from "@tenxgraph/core/store";
import type {
  BaseStoreOptions,
  ScanPage,
  StoreItem,
  StoreRow,
  StoreRowWrite,
} from "@tenxgraph/core/store";
import { Database } from "./connection/database.js";
import { fromJsonb, toJsonb } from "./json.js";
import { resolveOptions, type PgCheckpointerOptions } from "./options.js";
import { migrate } from "./schema/setup.js";

/** Options of {@link PgStore}: the connection options of `PgCheckpointer`, and an `index`. */
export type PgStoreOptions = BaseStoreOptions &
  Pick<
    PgCheckpointerOptions,
    | "postgresDsn"
    | "schema"
    | "pool"
    | "statementTimeoutMs"
    | "lockTimeoutMs"
    | "retry"
    | "preparedStatements"
    | "logger"
  >;

interface ItemRow {
  namespace: string;
  key: string;
  value: unknown;
  vectors?: unknown;
  created_at: Date;
  updated_at: Date;
}

/** Whether an item's namespace is `$1` or lies under it (`''`: every namespace). */
const UNDER = `($1 = '' OR namespace = $1 OR left(namespace, length($1) + 1) = $1 || '.')`;

const SQL = {
  get: `SELECT namespace, key, value, created_at, updated_at FROM store_items
    WHERE namespace = $1 AND key = $2`,
  put: `INSERT INTO store_items (namespace, key, value, vectors) VALUES ($1, $2, $3, $4)
    ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value,
      vectors = excluded.vectors, updated_at = clock_timestamp(),
      write_seq = nextval('store_write_seq')`,
  delete: `DELETE FROM store_items WHERE namespace = $1 AND key = $2`,
  scan: `SELECT namespace, key, value, created_at, updated_at FROM store_items
    WHERE ${UNDER} ORDER BY write_seq DESC LIMIT $2 OFFSET $3`,
  scanAll: `SELECT namespace, key, value, vectors, created_at, updated_at FROM store_items
    WHERE ${UNDER} ORDER BY write_seq DESC`,
  namespaces: `SELECT DISTINCT namespace FROM store_items WHERE ${UNDER}`,
} as const;

/**
 * The long-term store in PostgreSQL (table `store_items` in the checkpointer's schema, made by
 * the same migrations): every worker sharing the database shares it. Search filters and ranks
 * in this process over the items under the prefix (a plain scan of their vectors).
 *
 * @example
 * const store = new PgStore({ postgresDsn: process.env.DATABASE_URL! });
 * const app = graph.compile({ checkpointer: new PgCheckpointer({ postgresDsn }), store });
 */
export class PgStore extends BaseStore {
  readonly #db: Database;
  readonly #schema: string;
  #ready: Promise<void> | undefined;

  constructor(options: PgStoreOptions) {
    super(options);
    const { database } = resolveOptions(options);
    this.#schema = database.schema;
    this.#db = new Database(database);
  }

  /** Creates or migrates the schema (calls do it on first use); run again after a failure. */
  async setup(): Promise<void> {
    this.#ready ??= migrate(this.#db, this.#schema).then(
      () => undefined,
      (error: unknown) => {
        this.#ready = undefined;
        throw error;
      },
    );
    await this.#ready;
  }

  async close(): Promise<void> {
    await this.#db.end();
  }

  protected async readItem(namespace: string[], key: string): Promise<StoreItem | null> {
    await this.setup();
    const [row] = await this.#db.query<ItemRow>("store.get", "repeatable", SQL.get, [
      namespace.join("."),
      key,
    ]);
    return row ? toRow(row) : null;
  }

  protected async writeItem(write: StoreRowWrite): Promise<void> {
    await this.setup();
    // Repeatable: writing the same value again leaves the same item (a later write order).
    await this.#db.query("store.put", "repeatable", SQL.put, [
      write.namespace.join("."),
      write.key,
      toJsonb(write.value),
      JSON.stringify(write.vectors),
    ]);
  }

  protected async removeItem(namespace: string[], key: string): Promise<void> {
    await this.setup();
    await this.#db.query("store.delete", "repeatable", SQL.delete, [namespace.join("."), key]);
  }

  protected async scanItems(
    prefix: string[],
    page: ScanPage,
    withVectors: boolean,
  ): Promise<StoreRow[]> {
    await this.setup();
    const rows =
      page && !withVectors
        ? await this.#db.query<ItemRow>("store.search", "repeatable", SQL.scan, [
            prefix.join("."),
            page.limit,
            page.offset,
          ])
        : await this.#db.query<ItemRow>("store.search", "repeatable", SQL.scanAll, [
            prefix.join("."),
          ]);
    const found = rows.map(toRow);
    return page && withVectors ? found.slice(page.offset, page.offset + page.limit) : found;
  }

  protected async namespacesUnder(prefix: string[]): Promise<string[][]> {
    await this.setup();
    const rows = await this.#db.query<{ namespace: string }>(
      "store.listNamespaces",
      "repeatable",
      SQL.namespaces,
      [prefix.join(".")],
    );
    return rows.map((row) => row.namespace.split("."));
  }
}

function toRow(row: ItemRow): StoreRow {
  return {
    namespace: row.namespace.split("."),
    key: row.key,
    value: fromJsonb(row.value) as StoreRow["value"],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    vectors: (row.vectors as number[][] | undefined) ?? [],
  };
}
