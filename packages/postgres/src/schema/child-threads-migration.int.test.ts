/**
 * Migration 8 of the PostgreSQL schema on a real server: threads a store at step 7 made get the
 * parent their ids name, so the upgraded store lists and deletes them as child threads.
 */
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
// Steps 1 to 7 as published: they never change, so they build a store as version 7 made it.
// Version 7's step function, which migration 8 leaves as it was.
import {
  PUBLISHED_PUT_CHECKPOINT,
  migrateAsPublished,
  type PublishedWrite,
  publishedStepParams,
} from "../support/published-schema.js";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { sql } from "../support/pg-inspect.js";

const dsn = testPostgresDsn();
const schema = freshSchema("child_threads_upgrade");
let store: PgCheckpointer | undefined;

afterAll(async () => {
  await store?.close();
  await dropSchema(dsn, schema);
});

/**
 * Threads a release before made, by id, with the parent the upgrade must find: the longest
 * existing thread whose id followed by '|' starts the thread's id. `%` and `_` are plain
 * characters (LIKE would take `p_` for the parent of `pz|q`).
 */
const PARENTS: Record<string, string | null> = {
  a: null,
  "a|W@0": "a",
  "a|W@0|I@1": "a|W@0",
  "a|W@0|gone@2|J@3": "a|W@0",
  ab: null,
  p_: null,
  "pz|q": null,
  "100%": null,
  "100%|x": "100%",
  "lonely|x": null,
};

/** The first write of a thread, as version 7 wrote it. */
function firstWrite(threadId: string): PublishedWrite {
  return {
    threadId,
    incarnation: "life-1",
    userId: null,
    expectedVersion: 0,
    parentVersion: 0,
    node: null,
    runId: null,
    step: 0,
    currentNode: "MAIN",
    status: "completed",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
    replacedMessages: [],
    removedMessageIds: [],
    parentThreadId: null,
    ledger: { completions: [], claims: [] },
  };
}

async function versionSevenStore(): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    await migrateAsPublished(client, 7);
    for (const threadId of Object.keys(PARENTS)) {
      await client.query(PUBLISHED_PUT_CHECKPOINT, publishedStepParams(firstWrite(threadId), null));
    }
  } finally {
    await client.end();
  }
}

const childrenOf = (parent: string | null) =>
  Object.keys(PARENTS)
    .filter((id) => PARENTS[id] === parent)
    .sort();

describe("a store made at schema version 7", () => {
  it("gives each thread the parent its id names, if that thread exists, and deletes it with that parent", async () => {
    await versionSevenStore();
    store = sharedStore(schema);
    const listed = async (parentThreadId?: string) =>
      (await store!.listThreads({ parentThreadId })).map((thread) => thread.threadId).sort();

    expect(await listed()).toEqual(childrenOf(null));
    for (const parent of ["a", "a|W@0", "100%"]) {
      expect(await listed(parent), parent).toEqual(childrenOf(parent));
    }
    const rows = await sql<{ thread_id: string; parent_thread_id: string | null }>(
      dsn,
      `SELECT thread_id, parent_thread_id FROM ${pg.escapeIdentifier(schema)}.threads`,
    );
    expect(Object.fromEntries(rows.map((row) => [row.thread_id, row.parent_thread_id]))).toEqual(
      PARENTS,
    );

    await store.deleteThread("a");
    const left = Object.keys(PARENTS).filter((id) => id !== "a" && !id.startsWith("a|"));
    const after = await sql<{ thread_id: string }>(
      dsn,
      `SELECT thread_id FROM ${pg.escapeIdentifier(schema)}.threads`,
    );
    expect(after.map((row) => row.thread_id).sort()).toEqual(left.sort());
  });
});
