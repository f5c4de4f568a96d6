import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "@tenxgraph/core";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { openDatabase } from "./open-database.js";
import { fileAtSchema } from "./support/file-at-schema.js";
import { newThreadWrite } from "./support/new-thread-write.js";

let folder: string;
let path: string;
beforeEach(() => {
  folder = join(tmpdir(), `tenxgraph-sqlite-history-${randomUUID()}`);
  mkdirSync(folder);
  path = join(folder, "v5.db");
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** The schema version before history (step 6). */
const BEFORE_HISTORY = 5;

const T0 = "2026-11-30T10:00:00.000Z";
const T1 = "2026-11-30T10:00:05.000Z";

const body = (id: string, content: string) => JSON.stringify({ id, role: "user", content });

/**
 * A schema-5 file as the release before left it: `t-long` at version 3 with three messages
 * (one per version), and `t-empty` at version 1 with none.
 */
function schemaFiveFile(): void {
  const db = fileAtSchema(path, BEFORE_HISTORY);
  const thread = db.prepare(
    `INSERT INTO threads (thread_id, incarnation, user_id, status, version, message_count,
                          write_seq, created_at, updated_at)
     VALUES (?, 'life-1', NULL, ?, ?, ?, ?, ?, ?)`,
  );
  thread.run("t-long", "completed", 3, 3, 2, T0, T1);
  thread.run("t-empty", "running", 1, 0, 1, T0, T0);
  const state = db.prepare(
    `INSERT INTO states (thread_id, version, step, current_node, status, values_json,
                         interrupts_json, resume_answers_json, created_at)
     VALUES (?, ?, ?, ?, ?, ?, '[]', '{}', ?)`,
  );
  state.run("t-long", 1, 0, "MAIN", "running", '{"n":1}', T0);
  state.run("t-long", 2, 1, "TOOLS", "running", '{"n":2}', T0);
  state.run("t-long", 3, 2, null, "completed", '{"n":3}', T1);
  state.run("t-empty", 1, 0, "MAIN", "running", "{}", T0);
  const message = db.prepare(
    `INSERT INTO messages (thread_id, message_id, seq, body_json) VALUES ('t-long', ?, ?, ?)`,
  );
  ["m-a", "m-b", "m-c"].forEach((id, seq) => message.run(id, seq, body(id, id)));
  db.close();
}

const ids = (messages: readonly Message[]) => messages.map((message) => message.id);

describe("SqliteCheckpointer migrating to history (schema 6)", () => {
  it("gives each thread's head its transcript and parent; older versions are not history", async () => {
    schemaFiveFile();
    const store = new SqliteCheckpointer({ path });
    try {
      expect(await store.getCheckpoint("t-long")).toMatchObject({
        version: 3,
        parentVersion: 2,
        node: null,
        runId: null,
        messageCount: 3,
        values: { n: 3 },
        updatedAt: T1,
      });
      expect(await store.getVersion("t-empty", 1)).toMatchObject({
        parentVersion: null,
        messageCount: 0,
      });
      expect(ids(await store.listMessages("t-long"))).toEqual(["m-a", "m-b", "m-c"]);
      // Their transcripts were never recorded: history starts at the upgrade.
      expect(await store.getVersion("t-long", 2)).toBeNull();
      expect((await store.listVersions("t-long")).map((v) => v.version)).toEqual([3]);
      expect(await store.listMessages("t-long", { version: 2 })).toEqual([]);
      const fork = { ...newThreadWrite("t-long"), incarnation: "life-1", expectedVersion: 3 };
      await expect(store.putCheckpoint({ ...fork, parentVersion: 2 })).rejects.toMatchObject({
        code: "STORAGE_FAILURE_001",
        message: /version 2 of thread 't-long' is not kept .*before the upgrade/,
      });
    } finally {
      await store.close();
    }

    const db = new Database(path, { readonly: true });
    try {
      const rows = (sql: string) => db.prepare(sql).all();
      expect(rows(`SELECT thread_id, next_seq, delete_after FROM threads ORDER BY 1`)).toEqual([
        { thread_id: "t-empty", next_seq: 0, delete_after: null },
        { thread_id: "t-long", next_seq: 3, delete_after: null },
      ]);
      expect(
        rows(`SELECT thread_id, version, parent_version, node, run_id, message_count,
                     message_ranges, record_json ->> '$.frontier' AS frontier_json
              FROM states ORDER BY thread_id, version`),
      ).toEqual(
        [
          { thread_id: "t-empty", version: 1, parent_version: null, message_count: 0 },
          { thread_id: "t-long", version: 1, parent_version: null, message_count: null },
          { thread_id: "t-long", version: 2, parent_version: null, message_count: null },
          { thread_id: "t-long", version: 3, parent_version: 2, message_count: 3 },
        ].map((row) => ({
          node: null,
          run_id: null,
          message_ranges: null,
          frontier_json: null,
          ...row,
        })),
      );
      expect(rows(`SELECT seq, message_id FROM messages ORDER BY seq`)).toEqual([
        { seq: 0, message_id: "m-a" },
        { seq: 1, message_id: "m-b" },
        { seq: 2, message_id: "m-c" },
      ]);
    } finally {
      db.close();
    }
  });

  it("keys messages by place, so an edit after the upgrade adds a row with the same id", async () => {
    schemaFiveFile();
    const store = new SqliteCheckpointer({ path });
    try {
      const step = { ...newThreadWrite("t-long"), incarnation: "life-1" };
      const d = JSON.parse(body("m-d", "d")) as Message;
      const edited = JSON.parse(body("m-b", "b, edited")) as Message;
      await store.putCheckpoint({ ...step, expectedVersion: 3, newMessages: [d] });
      await store.putCheckpoint({ ...step, expectedVersion: 4, replacedMessages: [edited] });
      const contents = async (version?: number) =>
        (await store.listMessages("t-long", { version })).map((m) => m.content);
      expect(await contents(3)).toEqual(["m-a", "m-b", "m-c"]);
      expect(await contents(4)).toEqual(["m-a", "m-b", "m-c", "d"]);
      expect(await contents()).toEqual(["m-a", "b, edited", "m-c", "d"]);

      // Keeping the head alone drops versions 3 and 4 (the two from before the upgrade go
      // uncounted) and the row only they held: the first body of m-b.
      expect(await store.pruneVersions("t-long", { keepLast: 1 })).toBe(2);
      expect(await contents()).toEqual(["m-a", "b, edited", "m-c", "d"]);
      const db = new Database(path, { readonly: true });
      try {
        const left = db.prepare(`SELECT seq, message_id FROM messages ORDER BY seq`).all();
        expect(left).toEqual([
          { seq: 0, message_id: "m-a" },
          { seq: 2, message_id: "m-c" },
          { seq: 3, message_id: "m-d" },
          { seq: 4, message_id: "m-b" },
        ]);
      } finally {
        db.close();
      }
      expect(await store.setDeleteAfter("t-long", new Date(0))).toBe(true);
      expect(await store.deleteExpiredThreads()).toEqual(["t-long"]);
    } finally {
      await store.close();
    }
  });

  it("keys messages by (thread_id, seq), with a non-unique index on the id", () => {
    schemaFiveFile();
    const db = openDatabase({ path, synchronous: "FULL", busyTimeoutMs: 100 });
    try {
      const keyColumns = (db.pragma("table_info(messages)") as { name: string; pk: number }[])
        .filter((column) => column.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name);
      expect(keyColumns).toEqual(["thread_id", "seq"]);
      const indexes = db.pragma("index_list(messages)") as { name: string; unique: number }[];
      expect(indexes.find((index) => index.name === "messages_by_id")).toMatchObject({
        unique: 0,
      });
      expect(indexes.filter((index) => index.unique === 1)).toHaveLength(1); // the key
      expect(db.pragma("foreign_key_list(messages)")).toMatchObject([
        { table: "threads", from: "thread_id", to: "thread_id", on_delete: "CASCADE" },
      ]);
      expect(db.pragma("foreign_key_check")).toEqual([]);
    } finally {
      db.close();
    }
  });
});
