/**
 * `setup()` on a store made by an older release: the newer migrations keep every row, fill in
 * what they add for existing rows (an incarnation per thread, the store's id), and the store
 * then reads and writes the old threads.
 */
import { Message } from "@tenxgraph/core";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { ownedWrite } from "../support/owned-write.js";
import { sql } from "../support/pg-inspect.js";
import { migrateAsPublished } from "../support/published-schema.js";

const dsn = testPostgresDsn();
const schema = freshSchema("schema_upgrade");
let store: PgCheckpointer | undefined;

afterAll(async () => {
  await store?.close();
  await dropSchema(dsn, schema);
});

/** A store at schema version 1 with alice's and bob's threads, written by version 1's function. */
async function versionOneStore(): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    // Version 1's statements as published, its step function included.
    await migrateAsPublished(client, 1);
    for (const owner of ["alice", "bob"]) {
      const message = Message.user(`${owner}'s first message`);
      await client.query(
        `SELECT * FROM tenxgraph_put_checkpoint($1, $2, 0, 1, 'MAIN', 'running', $3, '[]', '{}',
           $4, $5)`,
        [`${owner}-thread`, owner, { owner }, [message.id], JSON.stringify([message])],
      );
    }
  } finally {
    await client.end();
  }
}

async function incarnations(): Promise<Record<string, number>> {
  const rows = await sql<{ thread_id: string; incarnation: string }>(
    dsn,
    `SELECT thread_id, incarnation FROM ${pg.escapeIdentifier(schema)}.threads`,
  );
  return Object.fromEntries(rows.map((row) => [row.thread_id, Number(row.incarnation)]));
}

describe("a store made at schema version 1", () => {
  it("is migrated keeping every thread, each with an incarnation of its own, and works on", async () => {
    await versionOneStore();
    store = sharedStore(schema);
    await store.setup();

    const migrated = await incarnations();
    expect(Object.keys(migrated).sort()).toEqual(["alice-thread", "bob-thread"]);
    expect(migrated["alice-thread"]).not.toBe(migrated["bob-thread"]);
    for (const owner of ["alice", "bob"]) {
      const threadId = `${owner}-thread`;
      expect(await store.getCheckpoint(threadId)).toMatchObject({
        // A thread made before the writers named lives has the empty id, which its runs carry.
        incarnation: "",
        version: 1,
        userId: owner,
        values: { owner },
        messageCount: 1,
      });
      expect(await store.listMessages(threadId)).toMatchObject([
        { content: `${owner}'s first message` },
      ]);
      const next = { ...ownedWrite(threadId, owner, 1), incarnation: "" };
      expect(await store.putCheckpoint(next)).toBe(2);
    }
    // The store got its id, which names its Redis keys.
    const ids = await sql(
      dsn,
      `SELECT store_id FROM ${pg.escapeIdentifier(schema)}.tenxgraph_store`,
    );
    expect(ids).toHaveLength(1);
    // A thread made after the migration: an incarnation none of the old ones has.
    await store.putCheckpoint(ownedWrite("new-thread", "carol", 0));
    const after = await incarnations();
    expect(after["new-thread"]).toBeGreaterThan(
      Math.max(migrated["alice-thread"]!, migrated["bob-thread"]!),
    );
  });
});
