/**
 * Migration 10 (`checkpoint-record`) and the functions installed after the numbered steps, on a
 * real server: a store as schema version 9 left it gets each version's record from its former
 * columns, wrapped values included, and setup makes a function again only when its text changed.
 */
import type { CheckpointWrite } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { schemaFingerprint, sql } from "../support/pg-inspect.js";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import {
  PUBLISHED_PUT_CHECKPOINT,
  migrateAsPublished,
  publishedStepParams,
} from "../support/published-schema.js";
import { FUNCTIONS } from "./functions/index.js";

const dsn = testPostgresDsn();
const schemas: string[] = [];
const opened: PgCheckpointer[] = [];

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  for (const schema of schemas) await dropSchema(dsn, schema);
});

function openStore(schema: string): PgCheckpointer {
  const store = sharedStore(schema, { redis: false });
  opened.push(store);
  return store;
}

/** Text `jsonb` refuses: the store wraps the value that holds it. */
const REFUSED_BY_JSONB = "nul \u0000 and half an emoji \ud83d";

const WRITES: CheckpointWrite[] = [
  {
    threadId: "plain",
    incarnation: "life",
    userId: "alice",
    expectedVersion: 0,
    step: 4,
    currentNode: "TOOL",
    status: "interrupted",
    values: { count: 2, nested: { list: [1, "two", null] } },
    interrupts: [{ id: "TOOL:4", value: { ask: "approve?" }, node: "TOOL", toolCallId: "c1" }],
    resumeAnswers: { earlier: true },
    newMessages: [],
  },
  {
    threadId: "fanned",
    incarnation: "life",
    userId: null,
    expectedVersion: 0,
    step: 1,
    currentNode: "A",
    frontier: { tasks: [{ node: "A" }, { node: "B", input: { n: 1 } }], joins: { C: ["A"] } },
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
  },
  {
    threadId: "wrapped",
    incarnation: "life",
    userId: null,
    expectedVersion: 0,
    step: 2,
    currentNode: null,
    status: "interrupted",
    values: { text: REFUSED_BY_JSONB },
    interrupts: [{ id: "ASK:2", value: REFUSED_BY_JSONB, node: "ASK" }],
    resumeAnswers: {},
    newMessages: [],
  },
];

/** A store as schema version 9 left it, holding {@link WRITES} written by its step function. */
async function versionNineStore(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    await migrateAsPublished(client, 9);
    for (const write of WRITES) {
      const published = {
        ...write,
        parentVersion: 0,
        node: null,
        runId: null,
        replacedMessages: [],
        removedMessageIds: [],
        ledger: { completions: [], claims: [] },
      };
      await client.query(PUBLISHED_PUT_CHECKPOINT, publishedStepParams(published, null));
    }
  } finally {
    await client.end();
  }
}

describe("a store made at schema version 9", () => {
  it("reads every version's runtime fields from its record, exactly, and writes on", async () => {
    const schema = freshSchema("record_migration");
    schemas.push(schema);
    await versionNineStore(schema);
    const store = openStore(schema);
    await store.setup();

    for (const { expectedVersion: _, newMessages: __, ...written } of WRITES) {
      const { frontier, ...rest } = written;
      const read = await store.getCheckpoint(written.threadId);
      expect(read).toMatchObject({ ...rest, version: 1 });
      if (frontier) expect(read?.frontier).toEqual(frontier);
      else expect(read).not.toHaveProperty("frontier");
      expect(await store.listVersions(written.threadId)).toEqual([read]);
    }
    const columns = await sql<{ column_name: string }>(
      dsn,
      `SELECT column_name FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'states' ORDER BY column_name`,
      [schema],
    );
    expect(columns.map((c) => c.column_name)).toEqual([
      "created_at",
      "message_count",
      "message_ranges",
      "node",
      "parent_version",
      "record",
      "run_id",
      "status",
      "thread_id",
      "version",
    ]);
    const next = { ...WRITES[2]!, expectedVersion: 1, step: 3, status: "running" as const };
    expect(await store.putCheckpoint(next)).toBe(2);
    expect(await store.getCheckpoint("wrapped")).toMatchObject({ step: 3, values: next.values });
  });
});

describe("the functions, installed after the numbered steps", () => {
  it("exist once each, in their current text, and are made again only when their text changed", async () => {
    const schema = freshSchema("function_install");
    schemas.push(schema);
    await versionNineStore(schema);
    await openStore(schema).setup();
    const s = pg.escapeIdentifier(schema);
    const functions = await sql<{ name: string; args: number }>(
      dsn,
      `SELECT p.proname AS name, p.pronargs AS args FROM pg_proc p
       JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1`,
      [schema],
    );
    // Every older version of the step function (22 arguments at version 9) is gone.
    expect(functions.map((fn) => fn.name)).toEqual(FUNCTIONS.map((fn) => fn.name).sort());
    expect(functions.find((fn) => fn.name === "tenxgraph_put_checkpoint")?.args).toBe(17);
    const digests = await sql(
      dsn,
      `SELECT name, digest, installed_at FROM ${s}.tenxgraph_functions`,
    );
    expect(digests).toHaveLength(FUNCTIONS.length);

    // An up-to-date store: nothing is made again.
    const before = await schemaFingerprint(dsn, schema);
    await openStore(schema).setup();
    expect(
      await sql(dsn, `SELECT name, digest, installed_at FROM ${s}.tenxgraph_functions`),
    ).toEqual(digests);
    expect(await schemaFingerprint(dsn, schema)).toEqual(before);

    // A text that changed (here: a digest that no longer matches) is made again, alone.
    await sql(dsn, `UPDATE ${s}.tenxgraph_functions SET digest = 'old' WHERE name = $1`, [
      "tenxgraph_claim_calls",
    ]);
    await sql(dsn, `DROP FUNCTION ${s}.tenxgraph_claim_calls(text, jsonb)`);
    const store = openStore(schema);
    await store.setup();
    const after = await sql<{ name: string; digest: string }>(
      dsn,
      `SELECT name, digest FROM ${s}.tenxgraph_functions ORDER BY name`,
    );
    expect(after.map((row) => row.digest)).not.toContain("old");
    expect(await schemaFingerprint(dsn, schema)).toEqual(before);
    const claim = { key: "k", toolName: "t", ownerRunId: "r", expectedAttempt: 0, leaseMs: 1000 };
    expect(await store.claimCalls("plain", [claim])).toEqual([{ won: true, key: "k", attempt: 1 }]);
  });
});
