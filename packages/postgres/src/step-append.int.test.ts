/**
 * The step function's append path (schema/functions/put-checkpoint.ts): an append to a head
 * that holds every row in order compares, locks and updates the thread row in one `UPDATE`, and
 * a write that update refuses or that fails after it leaves the row exactly as it was.
 */
import { Message } from "@tenxgraph/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "./support/pg-store.js";
import { sql } from "./support/pg-inspect.js";
import { STEP, stepArgs } from "./support/step-call.js";

const dsn = testPostgresDsn();
const schema = freshSchema("step_append");
const store = sharedStore(schema, { redis: false });
const client = new pg.Client({ connectionString: dsn });

beforeAll(async () => {
  await store.setup();
  await client.connect();
  await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
});

afterAll(async () => {
  await client.end();
  await store.close();
  await dropSchema(dsn, schema);
});

/** Index scans of `threads` so far in the client's transaction. */
async function threadScans(): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `SELECT idx_scan + seq_scan AS n FROM pg_stat_xact_user_tables
     WHERE relid = 'threads'::regclass`,
  );
  return Number(rows[0]!.n);
}

/** Every column of the thread's row: version, counts, write order, owner, time. */
async function threadRow(threadId: string): Promise<Record<string, unknown>> {
  const [row] = await sql(
    dsn,
    `SELECT * FROM ${pg.escapeIdentifier(schema)}.threads WHERE thread_id = $1`,
    [threadId],
  );
  return row!;
}

/** A thread of two versions by `alice`, its transcript [a, b] the prefix of its rows. */
async function twoVersions(threadId: string) {
  const [a, b] = [Message.user("a"), Message.assistant("b")];
  await client.query(STEP, stepArgs(threadId, 0, { messages: [a], userId: "alice" }));
  await client.query(STEP, stepArgs(threadId, 1, { messages: [b], userId: "alice" }));
  return { a, b };
}

describe("an append to the head's prefix", () => {
  it("reads the thread row once: the update that compares and locks it is the only read", async () => {
    await twoVersions("reads");
    const measure = async (args: unknown[]) => {
      await client.query("BEGIN");
      try {
        const before = await threadScans();
        const [row] = (await client.query<{ new_version: string | null }>(STEP, args)).rows;
        expect(row?.new_version).not.toBeNull();
        return (await threadScans()) - before;
      } finally {
        await client.query("ROLLBACK");
      }
    };
    // The update alone (state and message rows check no foreign key, migration 13).
    expect(await measure(stepArgs("reads", 2))).toBe(1);
    // A fork from version 1 takes the steps one by one: the lock, then the update.
    expect(await measure(stepArgs("reads", 2, { parent: 1 }))).toBe(2);
  });

  it("moves the row as the step-by-step path does: counts, version, write order only on a status change", async () => {
    await twoVersions("moves");
    const before = await threadRow("moves");
    const c = Message.user("c");
    await client.query(STEP, stepArgs("moves", 2, { messages: [c] }));
    const after = await threadRow("moves");
    expect(after).toMatchObject({
      version: "3",
      message_count: 3,
      next_seq: 3,
      user_id: "alice",
      write_seq: before.write_seq,
      incarnation: before.incarnation,
    });
    expect((after.updated_at as Date).getTime()).toBeGreaterThanOrEqual(
      (before.updated_at as Date).getTime(),
    );
    const completed = [...stepArgs("moves", 3)];
    completed[7] = "completed";
    await client.query(STEP, completed);
    expect(Number((await threadRow("moves")).write_seq)).toBeGreaterThan(Number(before.write_seq));
  });

  it("leaves the thread row as it was when refused: stale, another owner, an id already in the transcript", async () => {
    const { a } = await twoVersions("refused");
    const before = await threadRow("refused");
    const [stale] = (await client.query(STEP, stepArgs("refused", 1))).rows;
    expect(stale).toMatchObject({ new_version: null, found_version: "2" });
    await expect(
      client.query(STEP, stepArgs("refused", 2, { userId: "bob" })),
    ).rejects.toMatchObject({
      code: "TXG02",
    });
    await expect(
      client.query(STEP, stepArgs("refused", 2, { messages: [Message.user("d"), a] })),
    ).rejects.toMatchObject({ code: "TXG01", message: expect.stringContaining(a.id) });
    expect(await threadRow("refused")).toEqual(before);
    const [{ n }] = (await sql<{ n: string }>(
      dsn,
      `SELECT count(*) AS n FROM ${pg.escapeIdentifier(schema)}.messages WHERE thread_id = $1`,
      ["refused"],
    )) as [{ n: string }];
    expect(Number(n)).toBe(2);
  });
});
