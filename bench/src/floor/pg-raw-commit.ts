import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * The floor of a durable PostgreSQL store: one autocommit INSERT of a row about as large as what
 * a tenxgraph step stores, through `pg` and nothing else, on the same server. With fsync on,
 * each commit waits for the WAL to be flushed, the cost no durable step can avoid.
 */
export class PgRawCommit {
  readonly #pool: pg.Pool;
  readonly #table: string;
  readonly #body: string;

  private constructor(pool: pg.Pool, table: string, body: string) {
    this.#pool = pool;
    this.#table = table;
    this.#body = body;
  }

  /**
   * Opens up to `connections` connections and a scratch table `raw_commits` in `schema` (made
   * if missing). The row's text is random, so no compression shrinks what it writes.
   */
  static async open(
    dsn: string,
    {
      schema,
      rowBytes,
      connections = 1,
    }: { schema: string; rowBytes: number; connections?: number },
  ): Promise<PgRawCommit> {
    const pool = new pg.Pool({ connectionString: dsn, max: connections });
    pool.on("error", () => {});
    const table = `${pg.escapeIdentifier(schema)}.raw_commits`;
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    await pool.query(
      `CREATE TABLE IF NOT EXISTS ${table} (id bigserial PRIMARY KEY, body text NOT NULL)`,
    );
    // Kept in the row, uncompressed, like the store's small rows.
    await pool.query(`ALTER TABLE ${table} ALTER COLUMN body SET STORAGE PLAIN`);
    return new PgRawCommit(pool, table, randomText(rowBytes));
  }

  /** Makes `count` commits one after another on one connection; returns the mean ms. */
  async sequential(count: number): Promise<number> {
    const started = performance.now();
    await this.#commitOnOneConnection(count);
    return (performance.now() - started) / count;
  }

  /** Makes `each` commits on each of `connections` connections at once; returns commits/s. */
  async concurrent(connections: number, each: number): Promise<number> {
    const started = performance.now();
    await Promise.all(Array.from({ length: connections }, () => this.#commitOnOneConnection(each)));
    return (connections * each) / ((performance.now() - started) / 1000);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  async #commitOnOneConnection(count: number): Promise<void> {
    const client = await this.#pool.connect();
    try {
      for (let i = 0; i < count; i++) {
        await client.query(`INSERT INTO ${this.#table} (body) VALUES ($1)`, [this.#body]);
      }
    } finally {
      client.release();
    }
  }
}

/** `bytes` characters of random base64. */
function randomText(bytes: number): string {
  const length = Math.max(1, Math.round(bytes));
  return randomBytes(Math.ceil((length * 3) / 4) + 3)
    .toString("base64")
    .slice(0, length);
}
