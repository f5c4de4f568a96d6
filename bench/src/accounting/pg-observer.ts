import pg from "pg";

/** What the server is and how it is set, as the report prints it. */
export interface PgServerFacts {
  version: string;
  /** fsync, synchronous_commit, wal_sync_method, full_page_writes, shared_buffers. */
  settings: Record<string, string>;
  /** pg_stat_statements' `track` setting, or null when the extension cannot be read. */
  statementTracking: string | null;
  /** Whether pg_walinspect can be read (commit records are counted with it). */
  walInspect: boolean;
}

/** One statement's executions, as pg_stat_statements counted them. */
export interface ServerStatement {
  sql: string;
  /** Run inside a function (a statement of the store's PL/pgSQL), not sent by the client. */
  nested: boolean;
  calls: number;
  totalMs: number;
}

/** Bytes of a table with its indexes and TOAST: main forks, and all forks (FSM and VM too). */
export interface TableBytes {
  main: number;
  total: number;
}

const SETTINGS = [
  "fsync",
  "synchronous_commit",
  "wal_sync_method",
  "full_page_writes",
  "shared_buffers",
];

/** Main forks of each table of a schema, with its indexes and its TOAST table and index. */
const TABLE_BYTES = `
  SELECT t.relname AS name,
         pg_relation_size(t.oid)
           + CASE WHEN t.reltoastrelid = 0 THEN 0 ELSE pg_relation_size(t.reltoastrelid) END
           + (SELECT coalesce(sum(pg_relation_size(i.indexrelid)), 0) FROM pg_index i
              WHERE i.indrelid IN (t.oid, t.reltoastrelid)) AS main,
         pg_total_relation_size(t.oid) AS total
  FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace
  WHERE n.nspname = $1 AND t.relkind = 'r'`;

/**
 * One connection that reads the server's own accounts: its WAL position, the commit records
 * between two positions (pg_walinspect), the bytes of a schema's tables, and the statement
 * counts of pg_stat_statements. It never writes; run it in the store's database.
 */
export class PgObserver {
  readonly #client: pg.Client;
  #facts: PgServerFacts | undefined;

  private constructor(client: pg.Client) {
    this.#client = client;
  }

  static async open(dsn: string): Promise<PgObserver> {
    const client = new pg.Client({ connectionString: dsn, application_name: "tenxgraph-bench" });
    client.on("error", () => {});
    await client.connect();
    return new PgObserver(client);
  }

  /** The server's version, durability settings and which accounts it can give. */
  async facts(): Promise<PgServerFacts> {
    this.#facts ??= {
      version: await this.#one<string>("SHOW server_version"),
      settings: await this.#settings(),
      statementTracking: await this.#readable(
        "SELECT count(*) FROM pg_stat_statements",
        "SELECT current_setting('pg_stat_statements.track')",
      ),
      walInspect:
        (await this.#readable(
          "SELECT has_function_privilege('pg_get_wal_stats(pg_lsn, pg_lsn, boolean)', 'EXECUTE')",
        )) === "true",
    };
    return this.#facts;
  }

  /** The position up to which WAL is flushed to disk. */
  async walPosition(): Promise<string> {
    return this.#one<string>("SELECT pg_current_wal_flush_lsn()::text");
  }

  async walBytesBetween(from: string, to: string): Promise<number> {
    return Number(await this.#one("SELECT pg_wal_lsn_diff($2, $1)", [from, to]));
  }

  /** Transaction commit records in the WAL between two positions: every writing commit. */
  async commitsBetween(from: string, to: string): Promise<number | null> {
    return this.walRecordsBetween(from, to, "Transaction/COMMIT");
  }

  /**
   * WAL records of one kind (pg_walinspect's `resource_manager/record_type`, e.g.
   * `Heap/LOCK`, a row lock) between two positions; null without pg_walinspect.
   */
  async walRecordsBetween(from: string, to: string, type: string): Promise<number | null> {
    if (!(await this.facts()).walInspect) return null;
    // pg_walinspect refuses a start at the end of the WAL, which is where an empty range is.
    if (from === to) return 0;
    const count = await this.#one<string | null>(
      `SELECT sum(count) FROM pg_get_wal_stats($1, $2, true)
       WHERE "resource_manager/record_type" = $3`,
      [from, to, type],
    );
    return Number(count ?? 0);
  }

  async tableBytes(schema: string): Promise<Record<string, TableBytes>> {
    const { rows } = await this.#client.query<{ name: string; main: string; total: string }>(
      TABLE_BYTES,
      [schema],
    );
    return Object.fromEntries(
      rows.map((r) => [r.name, { main: Number(r.main), total: Number(r.total) }]),
    );
  }

  async resetStatementStats(): Promise<void> {
    if ((await this.facts()).statementTracking === null) return;
    await this.#client.query("SELECT pg_stat_statements_reset()");
  }

  /** Statements run in this database since the last reset (the reset itself left out). */
  async statementStats(): Promise<ServerStatement[] | null> {
    if ((await this.facts()).statementTracking === null) return null;
    const { rows } = await this.#client.query<{
      query: string;
      toplevel: boolean;
      calls: string;
      total_exec_time: number;
    }>(
      `SELECT query, toplevel, calls, total_exec_time FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND query NOT LIKE '%pg_stat_statements_reset%'`,
    );
    return rows.map((r) => ({
      sql: r.query,
      nested: !r.toplevel,
      calls: Number(r.calls),
      totalMs: r.total_exec_time,
    }));
  }

  async close(): Promise<void> {
    await this.#client.end();
  }

  async #one<T>(sql: string, values?: unknown[]): Promise<T> {
    const { rows } = await this.#client.query<Record<string, T>>(sql, values);
    return Object.values(rows[0] ?? {})[0] as T;
  }

  async #settings(): Promise<Record<string, string>> {
    const settings: Record<string, string> = {};
    for (const name of SETTINGS) {
      settings[name] = await this.#one<string>("SELECT current_setting($1)", [name]);
    }
    return settings;
  }

  /** The answer of `answer` if `probe` runs, else null (an extension missing or not loaded). */
  async #readable(probe: string, answer = probe): Promise<string | null> {
    try {
      await this.#client.query(probe);
      return String(await this.#one(answer));
    } catch {
      return null;
    }
  }
}
