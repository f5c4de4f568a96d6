/**
 * Step 7 of the PostgreSQL schema on a real server: a store at step 6 with a thread of three
 * versions upgrades keeping every row; its history starts at the upgrade (the head keeps its
 * transcript, older versions are not readable), and the thread then steps, edits and forks.
 */
import { Message } from "@tenxgraph/core";
import type { CheckpointWrite } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
// Steps 1 to 6 as published: they never change, so they build a store as version 6 made it.
import { LATEST_SCHEMA_VERSION } from "./migrations.js";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { sql } from "../support/pg-inspect.js";
import { migrateAsPublished } from "../support/published-schema.js";

const dsn = testPostgresDsn();
const schema = freshSchema("history_upgrade");
let store: PgCheckpointer | undefined;

afterAll(async () => {
  await store?.close();
  await dropSchema(dsn, schema);
});

const before = [Message.user("a"), Message.assistant("b"), Message.user("c")];

/** A store at schema version 6: versions 1 to 3 of `old-thread`, one message each. */
async function versionSixStore(): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    await migrateAsPublished(client, 6);
    for (const [expected, message] of before.entries()) {
      await client.query(
        `SELECT * FROM tenxgraph_put_checkpoint('old-thread', 'old life', 'alice', $1, $2, 'MAIN',
           'running', $3, '[]', '{}', $4, $5, '[]', '[]')`,
        [expected, expected + 1, { n: expected + 1 }, [message.id], JSON.stringify([message])],
      );
    }
  } finally {
    await client.end();
  }
}

function write(expectedVersion: number, overrides: Partial<CheckpointWrite>): CheckpointWrite {
  return {
    threadId: "old-thread",
    incarnation: "old life",
    userId: "alice",
    expectedVersion,
    step: expectedVersion + 1,
    currentNode: "MAIN",
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
    ...overrides,
  };
}

const texts = (messages: Message[]) => messages.map((m) => m.content);

describe("a store at schema version 6 with a thread of three versions", () => {
  it("upgrades to step 7: history starts at the upgrade, and the thread steps, edits and forks on", async () => {
    await versionSixStore();
    store = sharedStore(schema, { redis: false });
    await store.setup();

    const versions = await sql<{ version: number }>(
      dsn,
      `SELECT version FROM ${pg.escapeIdentifier(schema)}.tenxgraph_schema ORDER BY version`,
    );
    expect(versions.map((row) => row.version)).toEqual(
      Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1),
    );
    // The head keeps its transcript and names the version before as its parent.
    const head = await store.getCheckpoint("old-thread");
    expect(head).toMatchObject({
      version: 3,
      parentVersion: 2,
      node: null,
      runId: null,
      messageCount: 3,
      values: { n: 3 },
    });
    expect(await store.getVersion("old-thread", 3)).toEqual(head);
    expect(texts(await store.listMessages("old-thread", { version: 3 }))).toEqual(["a", "b", "c"]);
    // Older versions were written before transcripts were recorded: not readable, not forkable.
    expect(await store.getVersion("old-thread", 2)).toBeNull();
    expect((await store.listVersions("old-thread")).map((v) => v.version)).toEqual([3]);
    expect(await store.listMessages("old-thread", { version: 2 })).toEqual([]);
    await expect(store.putCheckpoint(write(3, { parentVersion: 2 }))).rejects.toThrow(
      /version 2 of thread 'old-thread' was written before the store kept history/,
    );

    // Steps append as before; an edit and a fork make new versions, leaving the old as they were.
    const d = Message.user("d");
    expect(await store.putCheckpoint(write(3, { newMessages: [d], node: "MODEL" }))).toBe(4);
    const editedB = { ...before[1]!, content: "b, edited" } as Message;
    await store.putCheckpoint(write(4, { replacedMessages: [editedB] }));
    expect(texts(await store.listMessages("old-thread"))).toEqual(["a", "b, edited", "c", "d"]);
    await store.putCheckpoint(write(5, { parentVersion: 3, removedMessageIds: [before[0]!.id] }));
    expect(texts(await store.listMessages("old-thread"))).toEqual(["b", "c"]);
    expect(texts(await store.listMessages("old-thread", { version: 5 }))).toEqual([
      "a",
      "b, edited",
      "c",
      "d",
    ]);

    // Pruning to the head drops every older state row, the pre-upgrade ones among them, and
    // the message rows only they held.
    expect(await store.pruneVersions("old-thread", { keepLast: 1 })).toBe(3);
    const rows = await sql<{ states: string; messages: string }>(
      dsn,
      `SELECT (SELECT count(*) FROM ${pg.escapeIdentifier(schema)}.states) AS states,
              (SELECT count(*) FROM ${pg.escapeIdentifier(schema)}.messages) AS messages`,
    );
    expect(rows[0]).toEqual({ states: "1", messages: "2" });
    expect(texts(await store.listMessages("old-thread"))).toEqual(["b", "c"]);
  });

  it("keys message rows by their place, so one id may have several rows", async () => {
    const columns = await sql<{ attname: string }>(
      dsn,
      `SELECT a.attname FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
       WHERE i.indrelid = '${pg.escapeIdentifier(schema)}.messages'::regclass AND i.indisprimary
       ORDER BY a.attnum`,
    );
    expect(columns.map((c) => c.attname)).toEqual(["thread_id", "seq"]);
  });
});
