import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { openDatabase } from "./open-database.js";
import { SQL } from "./sql.js";
import { newThreadWrite } from "./support/new-thread-write.js";

const folder = join(tmpdir(), `tenxgraph-sqlite-listing-${randomUUID()}`);
const path = join(folder, "threads.db");
afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface Schema {
  rootpage: number;
  name: string;
}

interface Opcode {
  opcode: string;
  p2: number;
}

describe("SqliteCheckpointer listing order", () => {
  it("moves a thread up when a write changes its status, not on a step that keeps it", async () => {
    const store = new SqliteCheckpointer({ path });
    try {
      const userId = `user-${randomUUID()}`;
      for (const threadId of ["a", "b"]) {
        await store.putCheckpoint(newThreadWrite(`${userId}-${threadId}`, { userId }));
      }
      const listed = async () =>
        (await store.listThreads({ userId })).map((t) => t.threadId.slice(-1));
      expect(await listed()).toEqual(["b", "a"]);

      const step = { ...newThreadWrite(`${userId}-a`, { userId }), expectedVersion: 1 };
      await store.putCheckpoint(step);
      expect(await listed()).toEqual(["b", "a"]);
      const [a] = await store.listThreads({ userId, offset: 1 });
      expect(a).toMatchObject({ version: 2, status: "running" });
      expect(a!.updatedAt).toBe((await store.getCheckpoint(`${userId}-a`))!.updatedAt);

      await store.putCheckpoint({ ...step, expectedVersion: 2, status: "completed" });
      expect(await listed()).toEqual(["a", "b"]);
    } finally {
      await store.close();
    }
  });

  it("takes a step that keeps the status without writing either listing index", () => {
    const db = openDatabase({ path, synchronous: "FULL", busyTimeoutMs: 100 });
    try {
      // SQLite rewrites an index whenever an UPDATE assigns one of its columns, even to the
      // value it had: the step's statement must not assign write_seq or user_id at all.
      const params = { threadId: "t", incarnation: "", userId: null, status: "running" };
      const bound = { ...params, expectedVersion: 1, messageCount: 0, rowsAdded: 0, now: "" };
      const names = new Map(
        (db.prepare(`SELECT rootpage, name FROM sqlite_schema`).all() as Schema[]).map(
          ({ rootpage, name }) => [rootpage, name],
        ),
      );
      // The b-trees a statement opens for writing (OpenWrite's p2 is the b-tree's root page).
      const written = (sql: string) =>
        (db.prepare(`EXPLAIN ${sql}`).all(bound) as Opcode[])
          .filter((op) => op.opcode === "OpenWrite")
          .map((op) => names.get(op.p2) ?? `page ${op.p2}`);
      const listing = ["threads_by_user", "threads_by_write"];
      const listingWritten = (sql: string) =>
        written(sql)
          .filter((name) => listing.includes(name))
          .sort();
      expect(written(SQL.advanceThread).length).toBeGreaterThan(0); // the thread's own row
      expect(listingWritten(SQL.advanceThread)).toEqual([]);
      expect(listingWritten(SQL.advanceThreadRelisted)).toEqual(listing);
      // Nor the sweep's index: a step never sets delete_after.
      for (const step of [SQL.advanceThread, SQL.advanceThreadRelisted]) {
        expect(written(step)).not.toContain("threads_by_delete_after");
      }
    } finally {
      db.close();
    }
  });
});
