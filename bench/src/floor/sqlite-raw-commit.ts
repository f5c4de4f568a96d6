import Database from "better-sqlite3";

/**
 * The floor of a durable store: one transaction per step, written with better-sqlite3 directly
 * and nothing else (`BEGIN IMMEDIATE`, one INSERT of a row about as large as what a tenxgraph
 * step stores, `COMMIT`) on a WAL file with the same `synchronous` setting. Under FULL each
 * commit waits for an fsync of the WAL, which is the cost no durable step can avoid.
 */
export class SqliteRawCommit {
  readonly #db: Database.Database;
  readonly #commitOne: () => void;

  constructor(path: string, synchronous: "FULL" | "NORMAL", rowBytes: number) {
    this.#db = new Database(path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma(`synchronous = ${synchronous}`);
    this.#db.exec("CREATE TABLE IF NOT EXISTS steps (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    const insert = this.#db.prepare("INSERT INTO steps (body) VALUES (?)");
    const body = "x".repeat(Math.max(1, Math.round(rowBytes)));
    const commit = this.#db.transaction(() => insert.run(body));
    this.#commitOne = () => commit.immediate();
  }

  /** Makes `count` commits, one after another; returns the mean ms per commit. */
  run(count: number): number {
    const started = performance.now();
    for (let i = 0; i < count; i++) this.#commitOne();
    return (performance.now() - started) / count;
  }

  close(): void {
    this.#db.close();
  }
}
