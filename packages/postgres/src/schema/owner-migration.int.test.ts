/**
 * Migration 9 of the PostgreSQL schema on a real server: a store at step 8, whose step function
 * handed a thread to whichever user a write named, keeps every thread and its owner, and from
 * then on refuses a write naming another user.
 */
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
// Steps 1 to 8 as published: they never change, so they build a store as version 8 made it.
import {
  PUBLISHED_PUT_CHECKPOINT,
  migrateAsPublished,
  publishedStepParams,
} from "../support/published-schema.js";
import { ownedWrite } from "../support/owned-write.js";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { sql } from "../support/pg-inspect.js";

const dsn = testPostgresDsn();
const schema = freshSchema("owner_upgrade");
let store: PgCheckpointer | undefined;

afterAll(async () => {
  await store?.close();
  await dropSchema(dsn, schema);
});

/** A store at step 8 with alice's thread, whose second write (as bob) made bob its owner. */
async function versionEightStore(): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    await migrateAsPublished(client, 8);
    const write = (owner: string, threadId: string, expectedVersion: number) => ({
      ...ownedWrite(threadId, owner, expectedVersion),
      incarnation: "life-1",
      parentVersion: expectedVersion,
      node: null,
      runId: null,
      replacedMessages: [],
      removedMessageIds: [],
      parentThreadId: null,
      ledger: { completions: [], claims: [] },
    });
    await client.query(
      PUBLISHED_PUT_CHECKPOINT,
      publishedStepParams(write("alice", "alice-thread", 0), null),
    );
    await client.query(
      PUBLISHED_PUT_CHECKPOINT,
      publishedStepParams(write("carol", "taken-thread", 0), null),
    );
    // What step 8 allowed: a write as another user took the thread over.
    await client.query(
      PUBLISHED_PUT_CHECKPOINT,
      publishedStepParams(write("dave", "taken-thread", 1), null),
    );
  } finally {
    await client.end();
  }
}

describe("a store made at schema version 8", () => {
  it("keeps every thread's owner, then refuses a write naming another user (STORAGE_OWNER_001)", async () => {
    await versionEightStore();
    store = sharedStore(schema);
    await store.setup();

    const owners = await sql<{ thread_id: string; user_id: string }>(
      dsn,
      `SELECT thread_id, user_id FROM ${pg.escapeIdentifier(schema)}.threads ORDER BY thread_id`,
    );
    expect(owners).toEqual([
      { thread_id: "alice-thread", user_id: "alice" },
      { thread_id: "taken-thread", user_id: "dave" },
    ]);
    const bobsWrite = { ...ownedWrite("alice-thread", "bob", 1), incarnation: "life-1" };
    await expect(store.putCheckpoint(bobsWrite)).rejects.toMatchObject({
      code: "STORAGE_OWNER_001",
      threadId: "alice-thread",
      userId: "bob",
    });
    expect(await store.getCheckpoint("alice-thread")).toMatchObject({
      userId: "alice",
      version: 1,
      values: { owner: "alice" },
    });
    const alicesWrite = { ...ownedWrite("alice-thread", "alice", 1), incarnation: "life-1" };
    expect(await store.putCheckpoint(alicesWrite)).toBe(2);
  });
});
