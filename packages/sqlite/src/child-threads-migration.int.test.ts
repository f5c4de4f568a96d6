import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { fileAtSchema } from "./support/file-at-schema.js";

let folder: string;
let path: string;
beforeEach(() => {
  folder = join(tmpdir(), `tenxgraph-sqlite-child-threads-${randomUUID()}`);
  mkdirSync(folder);
  path = join(folder, "v6.db");
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** The schema version before child threads recorded their parent (step 7). */
const BEFORE_CHILD_THREADS = 6;

/**
 * Threads a release before made, by id, with the parent the upgrade must find: the longest
 * existing thread whose id followed by '|' starts the thread's id. `%` and `_` are plain
 * characters (LIKE would take `p_` for the parent of `pz|q`).
 */
const PARENTS: Record<string, string | null> = {
  a: null,
  "a|W@0": "a",
  "a|W@0|I@1": "a|W@0",
  "a|W@0|gone@2|J@3": "a|W@0",
  ab: null,
  p_: null,
  "pz|q": null,
  "100%": null,
  "100%|x": "100%",
  "lonely|x": null,
};

function schemaSixFile(): void {
  const db = fileAtSchema(path, BEFORE_CHILD_THREADS);
  const thread = db.prepare(
    `INSERT INTO threads (thread_id, incarnation, user_id, status, version, message_count,
                          write_seq, created_at, updated_at)
     VALUES (?, 'life-1', NULL, 'completed', 1, 0, ?, '2026-11-30T10:00:00.000Z',
             '2026-11-30T10:00:00.000Z')`,
  );
  Object.keys(PARENTS).forEach((threadId, index) => thread.run(threadId, index + 1));
  db.close();
}

describe("SqliteCheckpointer migrating to child threads (schema 7)", () => {
  it("gives each thread made before the upgrade the parent its id names, if that thread exists", async () => {
    schemaSixFile();
    const store = new SqliteCheckpointer({ path });
    try {
      const listed = async (parentThreadId?: string) =>
        (await store.listThreads({ parentThreadId })).map((thread) => thread.threadId).sort();
      const childrenOf = (parent: string | null) =>
        Object.keys(PARENTS)
          .filter((id) => PARENTS[id] === parent)
          .sort();
      expect(await listed()).toEqual(childrenOf(null));
      for (const parent of ["a", "a|W@0", "100%"]) {
        expect(await listed(parent), parent).toEqual(childrenOf(parent));
      }

      expect(await store.deleteExpiredThreads()).toEqual([]);
      await store.deleteThread("a");
      expect(await listed()).toEqual(childrenOf(null).filter((id) => id !== "a"));
    } finally {
      await store.close();
    }

    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare(`SELECT thread_id FROM threads ORDER BY 1`).all();
      const left = Object.keys(PARENTS).filter((id) => id !== "a" && !id.startsWith("a|"));
      expect(rows).toEqual(left.sort().map((thread_id) => ({ thread_id })));
    } finally {
      db.close();
    }
  });
});
