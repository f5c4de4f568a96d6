/**
 * Step 6 of the PostgreSQL schema on a real server: a step's update of its thread row is HOT
 * (no index entry per step) while `listThreads` keeps its order, and a store at step 5 with
 * threads and a ledger upgrades keeping every row, then commits steps with ledger writes.
 */
import { Message } from "@tenxgraph/core";
import type { StepWrite } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
// Steps 1 to 5 as published: they never change, so they build a store as version 5 made it.
import { LATEST_SCHEMA_VERSION } from "./migrations.js";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { sql } from "../support/pg-inspect.js";
import { migrateAsPublished } from "../support/published-schema.js";

const dsn = testPostgresDsn();
const schemas: string[] = [];
const opened: PgCheckpointer[] = [];

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  for (const schema of schemas) await dropSchema(dsn, schema);
});

function newSchema(prefix: string): string {
  const schema = freshSchema(prefix);
  schemas.push(schema);
  return schema;
}

function openStore(schema: string): PgCheckpointer {
  const store = sharedStore(schema, { redis: false });
  opened.push(store);
  return store;
}

/** The write taking `threadId` from `expectedVersion` to the next version, without ledger writes. */
function step(
  threadId: string,
  expectedVersion: number,
  overrides: Partial<StepWrite> = {},
): StepWrite {
  return {
    threadId,
    incarnation: `life of ${threadId}`,
    userId: "hot-user",
    expectedVersion,
    step: expectedVersion + 1,
    currentNode: "MAIN",
    status: "running",
    values: { step: expectedVersion + 1 },
    interrupts: [],
    resumeAnswers: {},
    newMessages: [Message.user(`message ${expectedVersion + 1}`)],
    ledger: { completions: [], claims: [] },
    ...overrides,
  };
}

function claimOf(key: string) {
  return { key, toolName: "charge_card", ownerRunId: "run-a", leaseMs: 60_000, expectedAttempt: 0 };
}

/** The thread table's update counters, once the store's sessions reported them. */
async function threadUpdates(schema: string, updates: number) {
  const read = async () => {
    const [row] = await sql<{ n_tup_upd: string; n_tup_hot_upd: string }>(
      dsn,
      `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
       WHERE schemaname = $1 AND relname = 'threads'`,
      [schema],
    );
    return { updated: Number(row?.n_tup_upd ?? 0), hot: Number(row?.n_tup_hot_upd ?? 0) };
  };
  // A session reports its counters when it has been idle a moment or when it ends: wait for
  // the number of updates the test made.
  await expect.poll(async () => (await read()).updated, { timeout: 10_000 }).toBe(updates);
  return read();
}

describe("a step's update of its thread row", () => {
  it("is HOT while the status stays; a status change moves the thread up the listing", async () => {
    const schema = newSchema("hot_update");
    const store = openStore(schema);
    await store.commitStep(step("older", 0));
    await store.commitStep(step("newer", 0));
    const steps = 10;
    for (let version = 1; version <= steps; version++) {
      const ledger = {
        completions:
          version > 1
            ? [{ attempt: { key: `call-${version - 1}`, attempt: 1 }, result: "ok" }]
            : [],
        claims: [claimOf(`call-${version}`)],
      };
      await store.commitStep(step("older", version, { ledger }));
    }
    // Steps that keep the status leave the listing as the last status change or creation made it.
    const listed = async () =>
      (await store.listThreads({ userId: "hot-user" })).map((t) => t.threadId);
    expect(await listed()).toEqual(["newer", "older"]);
    await store.commitStep(step("older", steps + 1, { status: "completed" }));
    expect(await listed()).toEqual(["older", "newer"]);
    await store.close();

    // Every step that kept the status was a HOT update; the status change was not (write_seq,
    // which it moved, is indexed).
    expect(await threadUpdates(schema, steps + 1)).toEqual({ updated: steps + 1, hot: steps });
  });

  it("indexes only columns such a step leaves as they were, and keeps room for HOT (fillfactor 80)", async () => {
    const schema = newSchema("hot_indexes");
    await openStore(schema).setup();
    const s = pg.escapeIdentifier(schema);
    const columns = await sql<{ attname: string }>(
      dsn,
      `SELECT DISTINCT a.attname FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
       WHERE i.indrelid = '${s}.threads'::regclass ORDER BY a.attname`,
    );
    // `delete_after` (migration 7) is set by `setDeleteAfter` alone, never by a step;
    // `parent_thread_id` (migration 8) by the write that creates the thread alone.
    expect(columns.map((c) => c.attname)).toEqual([
      "delete_after",
      "parent_thread_id",
      "thread_id",
      "user_id",
      "write_seq",
    ]);
    const [table] = await sql<{ reloptions: string[] }>(
      dsn,
      `SELECT reloptions FROM pg_class WHERE oid = '${s}.threads'::regclass`,
    );
    expect(table?.reloptions).toEqual(["fillfactor=80"]);
  });
});

/** A store at schema version 5: a thread written by step 5's function, with two claims. */
async function versionFiveStore(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    await migrateAsPublished(client, 5);
    const message = Message.user("before the upgrade");
    await client.query(
      `SELECT * FROM tenxgraph_put_checkpoint('old-thread', 'old life', 'alice', 0, 1, 'MAIN',
         'running', '{}', '[]', '{}', $1, $2)`,
      [[message.id], JSON.stringify([message])],
    );
    await client.query("SELECT * FROM tenxgraph_claim_calls('old-thread', $1)", [
      JSON.stringify([claimOf("charge:1"), claimOf("charge:2")]),
    ]);
  } finally {
    await client.end();
  }
}

describe("a store at schema version 5 with threads and a ledger", () => {
  it("upgrades to the latest step keeping every row, then commits steps with ledger writes", async () => {
    const schema = newSchema("step_ledger_upgrade");
    await versionFiveStore(schema);
    const store = openStore(schema);
    await store.setup();

    const versions = await sql<{ version: number }>(
      dsn,
      `SELECT version FROM ${pg.escapeIdentifier(schema)}.tenxgraph_schema ORDER BY version`,
    );
    expect(versions.map((row) => row.version)).toEqual(
      Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1),
    );
    expect(await store.getCheckpoint("old-thread")).toMatchObject({
      incarnation: "old life",
      version: 1,
      userId: "alice",
      status: "running",
      messageCount: 1,
    });
    expect(await store.listMessages("old-thread")).toMatchObject([
      { content: "before the upgrade" },
    ]);
    expect((await store.listCalls("old-thread")).map((e) => [e.key, e.status, e.attempt])).toEqual([
      ["charge:1", "started", 1],
      ["charge:2", "started", 1],
    ]);

    // The claim made before the upgrade completes in a step write, which also claims anew.
    const commit = await store.commitStep(
      step("old-thread", 1, {
        incarnation: "old life",
        userId: "alice",
        ledger: {
          completions: [{ attempt: { key: "charge:1", attempt: 1 }, result: { charged: true } }],
          claims: [claimOf("charge:2"), claimOf("charge:3")],
        },
      }),
    );
    expect(commit.version).toBe(2);
    expect(commit.claims.map(({ key, won }) => [key, won])).toEqual([
      ["charge:2", false],
      ["charge:3", true],
    ]);
    expect(commit.claims[0]).toMatchObject({
      entry: { status: "started", attempt: 1, ownerRunId: "run-a" },
    });
    expect((await store.listCalls("old-thread")).map((e) => [e.key, e.status])).toEqual([
      ["charge:1", "completed"],
      ["charge:2", "started"],
      ["charge:3", "started"],
    ]);
  });
});
