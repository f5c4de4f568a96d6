/**
 * Migration 13 of the PostgreSQL schema on a real server: a store at step 12 loses the foreign
 * keys of its state and message rows (the ledger keeps its own), keeps every row, and deleting
 * a thread made before the upgrade still deletes all of them.
 */
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { ownedWrite } from "../support/owned-write.js";
import { sql, threadRowCounts } from "../support/pg-inspect.js";
import { MIGRATIONS } from "./migrations.js";

const dsn = testPostgresDsn();
const schema = freshSchema("step_rows_upgrade");
let store: PgCheckpointer | undefined;

afterAll(async () => {
  await store?.close();
  await dropSchema(dsn, schema);
});

/** The tables holding a foreign key to `threads`. */
async function keyedTables(): Promise<string[]> {
  const rows = await sql<{ table: string }>(
    dsn,
    `SELECT c.conrelid::regclass::text AS table FROM pg_constraint c
     JOIN pg_namespace n ON n.oid = c.connamespace
     WHERE n.nspname = $1 AND c.contype = 'f' AND c.confrelid = $2::regclass
     ORDER BY 1`,
    [schema, `${pg.escapeIdentifier(schema)}.threads`],
  );
  return rows.map((row) => row.table.replace(`${schema}.`, ""));
}

/** A store at step 12, its tables as steps 1 to 12 made them, with one thread's rows. */
async function versionTwelveStore(): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    for (const [index, { up }] of MIGRATIONS.slice(0, 12).entries()) {
      for (const statement of up) await client.query(statement);
      await client.query("INSERT INTO tenxgraph_schema (version) VALUES ($1)", [index + 1]);
    }
    await client.query(
      `INSERT INTO threads (thread_id, incarnation_id, user_id, status, version, message_count,
                            next_seq)
       VALUES ('old', 'life', 'alice', 'running', 1, 1, 1)`,
    );
    await client.query(
      `INSERT INTO states (thread_id, version, status, record, message_count)
       VALUES ('old', 1, 'running', '{}', 1)`,
    );
    await client.query(
      `INSERT INTO messages (thread_id, message_id, seq, body) VALUES ('old', 'm1', 0, '{}')`,
    );
  } finally {
    await client.end();
  }
}

describe("a store at schema version 12", () => {
  it("drops the foreign keys of states and messages, keeps every row, and deletes them with their thread", async () => {
    await versionTwelveStore();
    expect(await keyedTables()).toEqual(["messages", "states", "tool_executions"]);

    store = sharedStore(schema, { redis: false });
    await store.setup();

    expect(await keyedTables()).toEqual(["tool_executions"]);
    expect(await threadRowCounts(dsn, schema, "old")).toMatchObject({
      threads: 1,
      states: 1,
      messages: 1,
    });
    await store.putCheckpoint(ownedWrite("new", "bob", 0));
    await store.deleteThread("old");
    expect(await threadRowCounts(dsn, schema, "old")).toMatchObject({
      threads: 0,
      states: 0,
      messages: 0,
    });
    expect(await store.getCheckpoint("new")).toMatchObject({ version: 1, userId: "bob" });
  });
});

describe("rows an older release's delete left behind (it relied on the cascade)", () => {
  it("are gone when a thread of that id is made again, by a first write or by a copy", async () => {
    store ??= sharedStore(schema, { redis: false });
    await store.setup();
    const leftovers = async (threadId: string) => {
      const table = (name: string) => `${pg.escapeIdentifier(schema)}.${name}`;
      await sql(
        dsn,
        `INSERT INTO ${table("states")} (thread_id, version, status, record, message_count)
         VALUES ($1, 1, 'completed', '{"stale": true}', 2)`,
        [threadId],
      );
      await sql(
        dsn,
        `INSERT INTO ${table("messages")} (thread_id, message_id, seq, body)
         VALUES ($1, 'gone-1', 0, '{}'), ($1, 'gone-2', 1, '{}')`,
        [threadId],
      );
    };
    await leftovers("reused");
    // Completed, so it can be copied.
    await store.putCheckpoint({ ...ownedWrite("reused", "carol", 0), status: "completed" });
    expect(await store.getCheckpoint("reused")).toMatchObject({ version: 1, messageCount: 1 });
    expect((await store.listMessages("reused")).map((m) => m.content)).toEqual([
      "carol's message 1",
    ]);

    await leftovers("copied");
    await store.copyThread("reused", "copied");
    expect(await threadRowCounts(dsn, schema, "copied")).toMatchObject({ states: 1, messages: 1 });
    expect((await store.listMessages("copied")).map((m) => m.content)).toEqual([
      "carol's message 1",
    ]);
  });
});
