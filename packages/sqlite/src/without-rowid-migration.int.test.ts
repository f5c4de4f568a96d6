import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { LATEST_SCHEMA_VERSION, SCHEMA_TABLE } from "./migrations.js";
import { openDatabase } from "./open-database.js";
import { fileAtSchema } from "./support/file-at-schema.js";
import { newThreadWrite } from "./support/new-thread-write.js";

let folder: string;
let path: string;
beforeEach(() => {
  folder = join(tmpdir(), `tenxgraph-sqlite-without-rowid-${randomUUID()}`);
  mkdirSync(folder);
  path = join(folder, "v4.db");
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** The schema version before `threads` and `tool_executions` became WITHOUT ROWID tables. */
const ROWID_SCHEMA = 4;

const T0 = "2026-11-30T10:00:00.000Z";
const T1 = "2026-11-30T10:00:05.000Z";

/**
 * A schema-4 file as the release before left it: two threads (a user's, and one of an older
 * life with the empty incarnation), their states and messages, a stop request, and ledgers
 * whose claims interleave across the threads in an order that is not the keys' order. The
 * entry `zeta` was taken over after `alpha` was claimed: its row was updated in place, keeping
 * its first place.
 */
function schemaFourFile(): void {
  const db = fileAtSchema(path, ROWID_SCHEMA);
  const thread = db.prepare(
    `INSERT INTO threads (thread_id, incarnation, user_id, status, version, message_count,
                          write_seq, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  thread.run("t-busy", "life-1", "alice", "running", 2, 2, 7, T0, T1);
  thread.run("t-done", "", null, "completed", 1, 1, 3, T0, T0);
  const state = db.prepare(
    `INSERT INTO states (thread_id, version, step, current_node, status, values_json,
                         interrupts_json, resume_answers_json, created_at)
     VALUES (?, ?, ?, ?, ?, ?, '[]', '{}', ?)`,
  );
  state.run("t-busy", 1, 0, "MAIN", "running", '{"n":1}', T0);
  state.run("t-busy", 2, 1, "TOOLS", "running", '{"n":2}', T1);
  state.run("t-done", 1, 3, null, "completed", '{"done":true}', T0);
  const message = db.prepare(
    `INSERT INTO messages (thread_id, message_id, seq, body_json) VALUES (?, ?, ?, ?)`,
  );
  message.run("t-busy", "m-2", 0, '{"id":"m-2","role":"user","content":"charge it"}');
  message.run("t-busy", "m-1", 1, '{"id":"m-1","role":"assistant","content":"on it"}');
  message.run("t-done", "m-1", 0, '{"id":"m-1","role":"user","content":"hi"}');
  db.prepare(`INSERT INTO stop_requests (thread_id, count) VALUES ('t-busy', 2)`).run();

  const claim = db.prepare(
    `INSERT INTO tool_executions (thread_id, call_key, tool_name, status, attempt, owner_run_id,
                                  started_at, heartbeat_at, lease_expires_at)
     VALUES (?, ?, 'charge_card', 'started', 1, 'run-1', ?, ?, ?)`,
  );
  claim.run("t-done", "only", T0, T0, "2026-11-30T10:00:03.000Z");
  claim.run("t-busy", "zeta", T0, T0, "2026-11-30T10:00:03.000Z");
  claim.run("t-done", "other", T0, T0, "2026-11-30T10:00:03.000Z");
  claim.run("t-busy", "alpha", T0, T0, "2026-11-30T10:00:03.000Z");
  claim.run("t-busy", "mid", T0, T0, "2026-11-30T10:00:03.000Z");
  // The takeover of zeta (the statement schema 4 ran), then results and a pause.
  db.prepare(
    `UPDATE tool_executions
     SET status = 'started', attempt = attempt + 1, owner_run_id = 'run-2', started_at = ?,
         heartbeat_at = ?, lease_expires_at = '2999-01-01T00:00:00.000Z'
     WHERE thread_id = 't-busy' AND call_key = 'zeta' AND attempt = 1`,
  ).run(T1, T1);
  db.prepare(
    `UPDATE tool_executions
     SET status = 'completed', result_json = '{"charged":42}', completed_at = ?,
         heartbeat_at = NULL, lease_expires_at = NULL
     WHERE call_key IN ('alpha', 'only')`,
  ).run(T1);
  db.prepare(
    `UPDATE tool_executions SET status = 'interrupted', heartbeat_at = NULL,
                                lease_expires_at = NULL
     WHERE call_key = 'other'`,
  ).run();
  db.close();
}

/** The columns of schema 5; step 6 adds some (see history-migration.int.test.ts). */
const THREAD_COLUMNS = `thread_id, incarnation, user_id, status, version, message_count, write_seq,
                        created_at, updated_at`;
const STATE_COLUMNS = `thread_id, version, step, current_node, status, values_json,
                       interrupts_json, resume_answers_json, created_at`;
/** The same, read from the one record step 8 moved them into. */
const RECORD_STATE_COLUMNS = `thread_id, version, record_json ->> '$.step' AS step,
  record_json ->> '$.currentNode' AS current_node, status,
  json_extract(record_json, '$.values') AS values_json,
  json_extract(record_json, '$.interrupts') AS interrupts_json,
  json_extract(record_json, '$.resumeAnswers') AS resume_answers_json, created_at`;

/**
 * Every row of every table of ours (in the columns of schema 5), ordered by key; the ledger's
 * claim order as `claim_seq`. Before the upgrade (`rowid`), the file is at schema 4; after it,
 * at the latest schema, whose states keep the runtime's fields in `record_json`.
 */
function snapshot(db: Database.Database, claimOrder: "rowid" | "claim_seq") {
  const rows = (sql: string) => db.prepare(sql).all();
  return {
    threads: rows(`SELECT ${THREAD_COLUMNS} FROM threads ORDER BY thread_id`),
    states: rows(
      `SELECT ${claimOrder === "rowid" ? STATE_COLUMNS : RECORD_STATE_COLUMNS}
       FROM states ORDER BY thread_id, version`,
    ),
    messages: rows(
      `SELECT thread_id, message_id, seq, body_json FROM messages ORDER BY thread_id, seq`,
    ),
    stops: rows(`SELECT * FROM stop_requests ORDER BY thread_id`),
    ledger: rows(
      `SELECT thread_id, call_key, ${claimOrder} AS claim_seq, tool_name, status, attempt,
              owner_run_id, started_at, heartbeat_at, lease_expires_at, result_json, completed_at
       FROM tool_executions ORDER BY thread_id, call_key`,
    ),
  };
}

function readOnly(): Database.Database {
  return new Database(path, { readonly: true });
}

const LEASE = { toolName: "charge_card", leaseMs: 60_000, expectedAttempt: 0 };

describe("SqliteCheckpointer migrating to WITHOUT ROWID threads and ledger (schema 5)", () => {
  it("keeps every row and value, and the ledger's claim order", async () => {
    schemaFourFile();
    const old = readOnly();
    const before = snapshot(old, "rowid");
    // The fixture is what it claims: zeta, taken over in place, kept its first place, and the
    // claim order is not the keys' order.
    const claimOrder = old
      .prepare(`SELECT call_key FROM tool_executions WHERE thread_id = 't-busy' ORDER BY rowid`)
      .pluck()
      .all();
    expect(claimOrder).toEqual(["zeta", "alpha", "mid"]);
    old.close();

    const store = new SqliteCheckpointer({ path });
    try {
      const calls = await store.listCalls("t-busy");
      expect(calls.map((e) => [e.key, e.status, e.attempt, e.ownerRunId])).toEqual([
        ["zeta", "started", 2, "run-2"],
        ["alpha", "completed", 1, "run-1"],
        ["mid", "started", 1, "run-1"],
      ]);
      expect(calls[1]).toMatchObject({ result: { charged: 42 }, completedAt: T1 });
      expect((await store.listCalls("t-done")).map((e) => [e.key, e.status])).toEqual([
        ["only", "completed"],
        ["other", "interrupted"],
      ]);
      expect(await store.getCheckpoint("t-busy")).toMatchObject({
        incarnation: "life-1",
        userId: "alice",
        version: 2,
        step: 1,
        currentNode: "TOOLS",
        values: { n: 2 },
        messageCount: 2,
        updatedAt: T1,
      });
      expect((await store.listMessages("t-busy")).map((m) => m.id)).toEqual(["m-2", "m-1"]);
      expect(await store.countStopRequests("t-busy")).toBe(2);
      expect((await store.listThreads()).map((t) => t.threadId)).toEqual(["t-busy", "t-done"]);
    } finally {
      await store.close();
    }

    const migrated = readOnly();
    try {
      expect(snapshot(migrated, "claim_seq")).toEqual(before);
      const versions = migrated.prepare(`SELECT version FROM ${SCHEMA_TABLE}`).pluck().all();
      expect(versions).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
    } finally {
      migrated.close();
    }
  });

  it("leaves both tables WITHOUT ROWID, with their indexes and foreign keys whole", () => {
    schemaFourFile();
    const db = openDatabase({ path, synchronous: "FULL", busyTimeoutMs: 100 });
    try {
      const definition = (table: string) =>
        db.prepare(`SELECT sql FROM sqlite_schema WHERE name = ?`).pluck().get(table) as string;
      for (const table of ["threads", "tool_executions"]) {
        expect(definition(table)).toMatch(/\)\s*WITHOUT ROWID$/);
        expect(() => db.prepare(`SELECT rowid FROM ${table}`)).toThrow(/no such column: rowid/);
      }
      const indexes = (table: string) =>
        (db.pragma(`index_list(${table})`) as { name: string }[]).map((i) => i.name).sort();
      // (threads_by_delete_after is step 6's, threads_by_parent step 7's.)
      expect(indexes("threads")).toEqual(
        [
          "sqlite_autoindex_threads_1",
          "threads_by_delete_after",
          "threads_by_parent",
          "threads_by_user",
          "threads_by_write",
        ].sort(),
      );
      expect(indexes("tool_executions")).toEqual([
        "sqlite_autoindex_tool_executions_1",
        "tool_executions_by_claim",
      ]);
      for (const child of ["states", "messages", "tool_executions"]) {
        expect(db.pragma(`foreign_key_list(${child})`), child).toMatchObject([
          { table: "threads", from: "thread_id", to: "thread_id", on_delete: "CASCADE" },
        ]);
      }
      expect(db.pragma("foreign_key_check")).toEqual([]);
      // Turned off for the rebuild only: the connection the store goes on with enforces them.
      expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(db.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'new_%'`).all()).toEqual(
        [],
      );
    } finally {
      db.close();
    }
  });

  it("cascades a thread's deletion to its rows, and lists new claims after the old ones", async () => {
    schemaFourFile();
    const store = new SqliteCheckpointer({ path });
    try {
      await store.claimCalls("t-busy", [
        { key: "new-b", ownerRunId: "run-3", ...LEASE },
        { key: "new-a", ownerRunId: "run-3", ...LEASE },
      ]);
      const step = { ...newThreadWrite("t-busy"), incarnation: "life-1", expectedVersion: 2 };
      const ledger = {
        completions: [],
        claims: [{ key: "riding", ownerRunId: "run-3", ...LEASE }],
      };
      expect(await store.commitStep({ ...step, userId: "alice", ledger })).toMatchObject({
        version: 3,
        claims: [{ won: true, key: "riding" }],
      });
      expect((await store.listCalls("t-busy")).map((e) => e.key)).toEqual([
        "zeta",
        "alpha",
        "mid",
        "new-b",
        "new-a",
        "riding",
      ]);

      await store.deleteThread("t-busy");
      expect(await store.listCalls("t-busy")).toEqual([]);
      expect(await store.getCheckpoint("t-done")).toMatchObject({ version: 1 });
    } finally {
      await store.close();
    }
    const db = readOnly();
    try {
      // Only t-done's rows are left: one state, one message, two ledger entries.
      const left = { states: 1, messages: 1, tool_executions: 2 };
      for (const [table, n] of Object.entries(left)) {
        const rows = db.prepare(`SELECT thread_id, count(*) AS n FROM ${table} GROUP BY 1`).all();
        expect(rows, table).toEqual([{ thread_id: "t-done", n }]);
      }
      expect(db.pragma("foreign_key_check")).toEqual([]);
    } finally {
      db.close();
    }
  });

  it("refuses to migrate a file whose rows reference a missing thread, leaving it at schema 4", async () => {
    schemaFourFile();
    const db = new Database(path);
    db.pragma("foreign_keys = OFF");
    db.prepare(
      `INSERT INTO messages (thread_id, message_id, seq, body_json) VALUES ('gone', 'm', 0, '{}')`,
    ).run();
    db.close();

    const store = new SqliteCheckpointer({ path });
    try {
      await expect(store.setup()).rejects.toMatchObject({
        code: "STORAGE_SCHEMA_002",
        message: /1 rows of messages \(→ threads\) reference a missing row/,
      });
    } finally {
      await store.close();
    }
    const after = readOnly();
    try {
      expect(after.prepare(`SELECT MAX(version) FROM ${SCHEMA_TABLE}`).pluck().get()).toBe(
        ROWID_SCHEMA,
      );
      expect(after.prepare(`SELECT rowid FROM threads`).all()).toHaveLength(2);
    } finally {
      after.close();
    }
  });
});
