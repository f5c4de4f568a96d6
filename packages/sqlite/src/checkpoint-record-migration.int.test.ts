/**
 * Step 8 (`checkpoint-record`): a file as schema 7 left it gets each version's record from its
 * former columns, exactly (text JSON cannot escape otherwise: U+0000, half an emoji, big and
 * fractional numbers), and the store reads and writes on.
 */
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
  folder = join(tmpdir(), `tenxgraph-sqlite-record-${randomUUID()}`);
  mkdirSync(folder);
  path = join(folder, "v7.db");
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const T0 = "2026-12-01T10:00:00.000Z";
const ODD_TEXT = 'nul \u0000, half an emoji \ud83d, a quote " and é';
const VALUES = { text: ODD_TEXT, big: 9007199254740991, small: 0.1, list: [1, null, true] };
const INTERRUPTS = [{ id: "ASK:2", value: { ask: ODD_TEXT }, node: "ASK" }];
const FRONTIER = { tasks: [{ node: "ASK" }, { node: "WORK", input: { n: 1.5 } }], joins: {} };

/** A schema-7 file holding two versions of one thread, written as that release wrote them. */
function schemaSevenFile(): void {
  const db = fileAtSchema(path, 7);
  db.prepare(
    `INSERT INTO threads (thread_id, incarnation, user_id, status, version, message_count,
                          next_seq, write_seq, created_at, updated_at)
     VALUES ('t', 'life-1', 'alice', 'interrupted', 2, 0, 0, 1, ?, ?)`,
  ).run(T0, T0);
  const state = db.prepare(
    `INSERT INTO states (thread_id, version, parent_version, step, current_node, frontier_json,
                         status, values_json, interrupts_json, resume_answers_json,
                         message_count, created_at)
     VALUES ('t', ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
  );
  state.run(1, null, 0, "PLAN", null, "running", "{}", "[]", "{}", T0);
  state.run(
    2,
    1,
    1,
    "ASK",
    JSON.stringify(FRONTIER),
    "interrupted",
    JSON.stringify(VALUES),
    JSON.stringify(INTERRUPTS),
    JSON.stringify({ "ASK:1": ODD_TEXT }),
    T0,
  );
  db.close();
}

describe("SqliteCheckpointer migrating to one checkpoint record (schema 8)", () => {
  it("reads every version's runtime fields from its record, exactly, and writes on", async () => {
    schemaSevenFile();
    const store = new SqliteCheckpointer({ path });
    try {
      const head = await store.getCheckpoint("t");
      expect(head).toMatchObject({
        version: 2,
        step: 1,
        currentNode: "ASK",
        frontier: FRONTIER,
        values: VALUES,
        interrupts: INTERRUPTS,
        resumeAnswers: { "ASK:1": ODD_TEXT },
        userId: "alice",
      });
      expect(await store.getVersion("t", 1)).toMatchObject({
        step: 0,
        currentNode: "PLAN",
        values: {},
        interrupts: [],
        resumeAnswers: {},
      });
      expect(await store.getVersion("t", 1)).not.toHaveProperty("frontier");
      const next = {
        threadId: "t",
        incarnation: head!.incarnation,
        userId: null,
        expectedVersion: 2,
        step: 2,
        currentNode: "WORK",
        status: "running" as const,
        values: head!.values,
        interrupts: [],
        resumeAnswers: {},
        newMessages: [],
      };
      expect(await store.putCheckpoint(next)).toBe(3);
      expect(await store.getCheckpoint("t")).toMatchObject({ step: 2, values: VALUES });
    } finally {
      await store.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      const columns = db.prepare(`SELECT name FROM pragma_table_info('states') ORDER BY name`);
      expect(columns.pluck().all()).toEqual([
        "created_at",
        "message_count",
        "message_ranges",
        "node",
        "parent_version",
        "record_json",
        "run_id",
        "status",
        "thread_id",
        "version",
      ]);
    } finally {
      db.close();
    }
  });
});
