import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SqliteStoreSpec } from "../../support/store-spec.js";

/** A private folder for one test: its SQLite file and its external effect log. */
export interface TempStore {
  folder: string;
  /** The database file every process of the test opens. */
  dbPath: string;
  /** The same file as the store every process opens (`openStore`). */
  spec: SqliteStoreSpec;
  /** The append-only log the tools write their side effects to. */
  logPath: string;
  /** Deletes the folder with the database, its WAL files and the log. */
  remove(): void;
}

/** Creates a fresh folder under the OS temp dir; `name` makes leftovers easy to attribute. */
export function createTempStore(name: string): TempStore {
  const folder = join(tmpdir(), `tenxgraph-concurrency-${name}-${randomUUID()}`);
  mkdirSync(folder, { recursive: true });
  const dbPath = join(folder, "threads.db");
  return {
    folder,
    dbPath,
    spec: { kind: "sqlite", path: dbPath },
    logPath: join(folder, "effects.jsonl"),
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}
