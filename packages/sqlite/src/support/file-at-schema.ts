import Database from "better-sqlite3";
import { MIGRATIONS, SCHEMA_TABLE } from "../migrations.js";

/**
 * A database file at `path` and schema `version`, built by the published steps as an older
 * release did, for the migration tests to fill with rows and upgrade.
 */
export function fileAtSchema(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.exec(`CREATE TABLE ${SCHEMA_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
  for (let step = 1; step <= version; step++) {
    for (const statement of MIGRATIONS[step - 1]!.up) db.exec(statement);
    db.prepare(`INSERT INTO ${SCHEMA_TABLE} VALUES (?, ?)`).run(step, "2026-01-01T00:00:00.000Z");
  }
  return db;
}
