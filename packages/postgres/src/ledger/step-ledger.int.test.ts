/**
 * Ledger writes riding in a step write, raced on a real server against another worker's claims:
 * the step write waits for a call being taken over and then writes nothing, and never blocks
 * the taker's other claims on the thread (which would deadlock the two).
 */
import { Message } from "@tenxgraph/core";
import type { StepWrite } from "@tenxgraph/core/storage";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { sql } from "../support/pg-inspect.js";

const dsn = testPostgresDsn();
const schema = freshSchema("step_ledger_race");
const store = sharedStore(schema, { redis: false });
const taker = new pg.Client({ connectionString: dsn });

afterAll(async () => {
  await taker.end();
  await store.close();
  await dropSchema(dsn, schema);
});

function claimOf(key: string, expectedAttempt: number) {
  return { key, toolName: "charge_card", ownerRunId: "taker", leaseMs: 60_000, expectedAttempt };
}

/** The next step of thread `t` carrying the result of attempt 1 of `key`. */
function stepCompleting(key: string): StepWrite {
  return {
    threadId: "t",
    incarnation: "life",
    userId: null,
    expectedVersion: 1,
    step: 2,
    currentNode: "MAIN",
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [Message.user("the zombie's step")],
    ledger: { completions: [{ attempt: { key, attempt: 1 }, result: "charged" }], claims: [] },
  };
}

/** Whether some session waits for the transaction `xid` to end (for a row lock it holds). */
async function someoneWaitsFor(xid: string): Promise<boolean> {
  const waiting = await sql(
    dsn,
    `SELECT 1 FROM pg_locks
     WHERE locktype = 'transactionid' AND transactionid::text = $1 AND NOT granted`,
    [xid],
  );
  return waiting.length > 0;
}

describe("a step write whose riding result's call is being taken over", () => {
  it("waits for the takeover, fails with ClaimLostError writing nothing, and never blocks the taker", async () => {
    const { ledger: _, ...step } = stepCompleting("k");
    await store.putCheckpoint({ ...step, expectedVersion: 0, step: 1, newMessages: [] });
    await store.claimCalls("t", [claimOf("k", 0)]);
    await taker.connect();
    await taker.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);

    // Another worker takes the call over, in a transaction it keeps open.
    await taker.query("BEGIN");
    await taker.query("SELECT * FROM tenxgraph_claim_calls('t', $1)", [
      JSON.stringify([claimOf("k", 1)]),
    ]);
    const { rows } = await taker.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid");
    const xid = rows[0]!.xid;
    // The zombie's step write locks the thread row, then waits for the call's entry.
    const zombie = store.commitStep(stepCompleting("k"));
    // Its refusal may arrive before the taker's COMMIT returns: handled now, asserted below.
    zombie.catch(() => {});
    await expect.poll(() => someoneWaitsFor(xid), { timeout: 5_000 }).toBe(true);

    // The taker claims another call of the thread: its foreign-key check must get past the
    // step write's lock on the thread row at once, or the two would wait for each other.
    await taker.query("SET LOCAL lock_timeout = '500ms'");
    await taker.query("SELECT * FROM tenxgraph_claim_calls('t', $1)", [
      JSON.stringify([claimOf("j", 0)]),
    ]);
    await taker.query("COMMIT");

    await expect(zombie).rejects.toMatchObject({ code: "TOOL_CONFLICT_002", key: "k", attempt: 1 });
    expect((await store.getCheckpoint("t"))?.version).toBe(1);
    expect(await store.listMessages("t")).toEqual([]);
    const entries = await store.listCalls("t");
    expect(entries.map((e) => [e.key, e.status, e.attempt, e.ownerRunId])).toEqual([
      ["k", "started", 2, "taker"],
      ["j", "started", 1, "taker"],
    ]);
  });
});
