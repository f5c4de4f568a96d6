import { StorageError, StorageSchemaError } from "@tenxgraph/core/storage";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import Database from "better-sqlite3";
import { keepAlive } from "./keep-alive.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, OWN_TABLES, SCHEMA_TABLE } from "./migrations.js";

/** How a connection is opened; see `SqliteCheckpointerOptions`. */
export interface ConnectionSettings {
  path: string;
  synchronous: "FULL" | "NORMAL";
  busyTimeoutMs: number;
}

/**
 * Opens the database file (creating it and its folder if missing), sets the connection's
 * pragmas and brings the schema to {@link LATEST_SCHEMA_VERSION}. A file that is not ours, or
 * whose schema is newer than this code, is refused before anything is written to it.
 */
export function openDatabase(settings: ConnectionSettings): Database.Database {
  const { path, synchronous, busyTimeoutMs } = settings;
  if (path !== ":memory:") createFolder(path);
  const db = keepAlive(new Database(path, { timeout: busyTimeoutMs }));
  try {
    // Every check reads only, and comes before the first write (switching to WAL rewrites the
    // header): a file that is not a database fails here with SQLITE_NOTADB, and one that is not
    // ours, or is newer than this code, is refused with its bytes unchanged.
    const tables = tableNames(db);
    assertOurs(path, tables);
    const version = tables.has(SCHEMA_TABLE) ? schemaVersion(db, path) : 0;
    useWal(db, busyTimeoutMs);
    // exec, not pragma(): it makes no Statement object that a GC could collect (see keep-alive).
    db.exec("PRAGMA foreign_keys = ON");
    db.exec(`PRAGMA synchronous = ${synchronous}`);
    if (version < LATEST_SCHEMA_VERSION) migrate(db, path, version);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Switches the file to WAL mode unless it is in it already. The switch upgrades a lock the
 * statement already holds, and SQLite answers SQLITE_BUSY for that at once instead of calling
 * the busy handler, so a process that opens a new file while another one writes to it retries
 * here, up to `busyTimeoutMs`, as any other write would wait.
 */
function useWal(db: Database.Database, busyTimeoutMs: number): void {
  const readMode = keepAlive(db.prepare("PRAGMA journal_mode")).pluck();
  if (readMode.get() === "wal") return;
  const giveUpAt = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (error) {
      const busy = (error as { code?: unknown }).code === "SQLITE_BUSY";
      if (!busy || Date.now() >= giveUpAt) throw error;
      Atomics.wait(PAUSE, 0, 0, 10); // a synchronous 10 ms pause: the driver is synchronous too
    }
  }
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

function createFolder(path: string): void {
  try {
    makeFolders(dirname(path));
  } catch (error) {
    const why = `cannot create the folder of '${path}': ${(error as Error).message}${cwdHint(path)}`;
    throw new StorageError("setup", new Error(why, { cause: error }));
  }
}

/**
 * `mkdir -p`, one level at a time. Not `mkdirSync(…, { recursive: true })`: on Node.js 20 that
 * loops forever, blocking the event loop, when a level cannot be created because its parent is
 * gone (a deleted working directory, a path under /proc); here that level fails with ENOENT.
 */
function makeFolders(folder: string): void {
  const missing: string[] = [];
  for (let current = folder; !existsSync(current); current = dirname(current)) {
    missing.push(current);
    if (dirname(current) === current) break; // a root that does not exist: mkdir says why
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (error) {
      // Another process opening the same new file created it first.
      if ((error as { code?: unknown }).code !== "EEXIST") throw error;
    }
  }
}

/** A relative path in a working directory that was deleted is a puzzling ENOENT: say so. */
function cwdHint(path: string): string {
  if (isAbsolute(path)) return "";
  try {
    process.cwd();
    return "";
  } catch {
    return " (the working directory no longer exists; give an absolute path)";
  }
}

function tableNames(db: Database.Database): Set<string> {
  const rows = keepAlive(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")).all();
  return new Set((rows as { name: string }[]).map((row) => row.name));
}

/**
 * Applies the pending migrations in one `BEGIN IMMEDIATE` transaction: SQLite's write lock is
 * the migration lock, so of several processes starting at once one migrates and the others,
 * checking again under the lock, find the schema current. DDL is transactional in SQLite, so a
 * failed step leaves no trace. When a pending step rebuilds a referenced table
 * (`foreignKeysOff`), foreign keys are off for the whole transaction, which is then checked
 * with `PRAGMA foreign_key_check` before it commits.
 */
function migrate(db: Database.Database, path: string, fromVersion: number): void {
  // Under the lock another process may have applied some of these steps: they are skipped
  // below, and foreign keys stay off for nothing, which is harmless.
  const foreignKeysOff = MIGRATIONS.slice(fromVersion).some((step) => step.foreignKeysOff);
  const apply = db.transaction(() => {
    assertOurs(path, tableNames(db));
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`,
    );
    const record = keepAlive(
      db.prepare(`INSERT INTO ${SCHEMA_TABLE} (version, applied_at) VALUES (?, ?)`),
    );
    for (let version = schemaVersion(db, path) + 1; version <= LATEST_SCHEMA_VERSION; version++) {
      for (const statement of MIGRATIONS[version - 1]!.up) db.exec(statement);
      record.run(version, new Date().toISOString());
    }
    if (foreignKeysOff) assertForeignKeysHold(db, path);
  });
  // The pragma does nothing inside a transaction, so it is set around it.
  if (foreignKeysOff) db.exec("PRAGMA foreign_keys = OFF");
  try {
    apply.immediate();
  } finally {
    if (foreignKeysOff) db.exec("PRAGMA foreign_keys = ON");
  }
}

/**
 * Fails the migration (rolling it back) when a row references a thread that does not exist:
 * with foreign keys off nothing else would notice, and the store relies on the cascade.
 */
function assertForeignKeysHold(db: Database.Database, path: string): void {
  const check = keepAlive(db.prepare("PRAGMA foreign_key_check"));
  const broken = check.all() as { table: string; parent: string }[];
  if (broken.length === 0) return;
  const tables = [...new Set(broken.map((row) => `${row.table} (→ ${row.parent})`))].join(", ");
  const detail =
    `${broken.length} rows of ${tables} reference a missing row, so the schema was not ` +
    `migrated; remove those rows or restore the file from a backup`;
  throw new StorageSchemaError("STORAGE_SCHEMA_002", path, detail);
}

/** Our tables without our schema table belong to another program: never write into them. */
function assertOurs(path: string, tables: Set<string>): void {
  if (tables.has(SCHEMA_TABLE)) return;
  const clashing = OWN_TABLES.filter((name) => tables.has(name));
  if (clashing.length === 0) return;
  const detail =
    `it has tables named ${clashing.join(", ")} but no ${SCHEMA_TABLE} table, so they belong ` +
    `to another program; point SqliteCheckpointer at another file`;
  throw new StorageSchemaError("STORAGE_SCHEMA_002", path, detail);
}

function schemaVersion(db: Database.Database, path: string): number {
  const select = keepAlive(db.prepare(`SELECT MAX(version) AS version FROM ${SCHEMA_TABLE}`));
  const row = select.get() as {
    version: number | null;
  };
  const version = row.version ?? 0;
  if (version > LATEST_SCHEMA_VERSION) {
    const detail =
      `its schema is version ${version}, newer than the ${LATEST_SCHEMA_VERSION} this ` +
      `@tenxgraph/sqlite knows; upgrade @tenxgraph/sqlite to use it`;
    throw new StorageSchemaError("STORAGE_SCHEMA_001", path, detail);
  }
  return version;
}
