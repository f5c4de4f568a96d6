/**
 * Deleting a thread on a real server, now that its state and message rows have no foreign key
 * (migration 13): `removeThread` deletes them itself, and a step in flight on the thread (or on
 * a descendant) when the delete starts cannot leave one behind.
 */
import { Message } from "@tenxgraph/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { ownedWrite } from "./support/owned-write.js";
import { dropSchema, freshSchema, sharedStore } from "./support/pg-store.js";
import { sql, threadRowCounts } from "./support/pg-inspect.js";
import { STEP, stepArgs } from "./support/step-call.js";

const dsn = testPostgresDsn();
const schema = freshSchema("thread_delete");
const store = sharedStore(schema, { redis: false });
const stepper = new pg.Client({ connectionString: dsn });

beforeAll(async () => {
  await store.setup();
  await stepper.connect();
  await stepper.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
});

afterAll(async () => {
  await stepper.end();
  await store.close();
  await dropSchema(dsn, schema);
});

/** A step appending `message` to alice's `threadId` at `expected`, as a store would send it. */
function appendArgs(threadId: string, expected: number, message: Message): unknown[] {
  const owner = { messages: [message], userId: "alice", life: `alice's life of ${threadId}` };
  return stepArgs(threadId, expected, { ...owner, record: "{}" });
}

/** Whether a session waits for a lock (the delete, for the step's thread row). */
async function someoneWaits(): Promise<boolean> {
  const rows = await sql(dsn, `SELECT 1 FROM pg_locks WHERE NOT granted`);
  return rows.length > 0;
}

const NONE = { threads: 0, states: 0, messages: 0, tool_executions: 0, stop_requests: 0 };

describe("deleting a thread", () => {
  it("deletes its states, messages, ledger and stop requests, and its descendants' too", async () => {
    await store.putCheckpoint(ownedWrite("parent", "alice", 0));
    await store.putCheckpoint({
      ...ownedWrite("parent|MAIN@1", "alice", 0),
      parentThreadId: "parent",
    });
    await store.putCheckpoint(ownedWrite("parent|MAIN@1", "alice", 1));
    await store.claimCalls("parent|MAIN@1", [
      { key: "k", toolName: "t", ownerRunId: "r", leaseMs: 60_000, expectedAttempt: 0 },
    ]);
    await store.requestStop("parent");

    await store.deleteThread("parent");
    expect(await threadRowCounts(dsn, schema, "parent")).toEqual(NONE);
    expect(await threadRowCounts(dsn, schema, "parent|MAIN@1")).toEqual(NONE);
  });

  it("waits for a step in flight and deletes what it wrote: no state or message row is left", async () => {
    await store.putCheckpoint(ownedWrite("busy", "alice", 0));
    await stepper.query("BEGIN");
    const [written] = (
      await stepper.query<{ new_version: string }>(STEP, appendArgs("busy", 1, Message.user("x")))
    ).rows;
    expect(written?.new_version).toBe("2");

    const deleting = store.deleteThread("busy");
    await expect.poll(someoneWaits, { timeout: 5_000 }).toBe(true);
    await stepper.query("COMMIT");

    await deleting;
    expect(await threadRowCounts(dsn, schema, "busy")).toEqual(NONE);
    // A step after the delete finds no thread: stale, writing nothing.
    const [late] = (
      await stepper.query<{ new_version: string | null }>(
        STEP,
        appendArgs("busy", 2, Message.user("y")),
      )
    ).rows;
    expect(late?.new_version).toBeNull();
    expect(await threadRowCounts(dsn, schema, "busy")).toEqual(NONE);
  });
});
