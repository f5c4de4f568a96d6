/**
 * Step 2 of the PostgreSQL schema on a real server: claims get a lease column, every row is kept,
 * and a claim made before the step keeps the lease it had then (heartbeat + the old 3000 ms).
 */
import { PUT_CHECKPOINT_WITH_INCARNATION } from "./put-checkpoint-function.js";
import type { LedgerEntry } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { sql } from "../support/pg-inspect.js";

const dsn = testPostgresDsn();
const schema = freshSchema("lease_migration");
const opened: PgCheckpointer[] = [];

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  await dropSchema(dsn, schema);
});

/**
 * The schema as step 3 left it, with a thread whose ledger holds `rows`: made by today's code,
 * then taken back to step 3 (no lease column, version 3). The claim function's body does not
 * matter: step 4 replaces it whatever it is.
 */
async function schemaBeforeLeases(rows: [key: string, status: string, heartbeatAt: Date | null][]) {
  const setup = sharedStore(schema, { redis: false });
  await setup.setup();
  await setup.close();
  const s = pg.escapeIdentifier(schema);
  await sql(dsn, `ALTER TABLE ${s}.tool_executions DROP COLUMN lease_expires_at`);
  // Steps 5 to 8 undone too: the writer's incarnation id, step 8's parent column, step 7's
  // history columns, keys and functions, step 6's ledger functions, and the step function as
  // step 2 made it.
  await sql(dsn, `ALTER TABLE ${s}.threads DROP COLUMN incarnation_id`);
  await sql(dsn, `ALTER TABLE ${s}.threads DROP COLUMN parent_thread_id`);
  await undoHistory(s);
  await sql(dsn, `DROP FUNCTION ${s}.tenxgraph_lost_completion(text, jsonb)`);
  await sql(dsn, `DROP FUNCTION ${s}.tenxgraph_claim_absent_calls(text, jsonb)`);
  await sql(dsn, `SET search_path TO ${s}; ${PUT_CHECKPOINT_WITH_INCARNATION}`);
  await sql(dsn, `DELETE FROM ${s}.tenxgraph_schema WHERE version > 3`);
  await sql(
    dsn,
    `INSERT INTO ${s}.threads (thread_id, status, version) VALUES ('t', 'running', 1)`,
  );
  for (const [index, [key, status, heartbeatAt]] of rows.entries()) {
    const done = status === "completed";
    await sql(
      dsn,
      `INSERT INTO ${s}.tool_executions (thread_id, call_key, claim_batch, claim_index, tool_name,
         status, attempt, owner_run_id, started_at, heartbeat_at, result, completed_at)
       VALUES ('t', $1, 1, $2, 'charge_card', $3, 1, 'old-run', now(), $4, $5, $6)`,
      [key, index, status, heartbeatAt, done ? '"charged"' : null, done ? new Date() : null],
    );
  }
}

/** Takes schema `s` (quoted) from step 7 back to step 6's tables, without any step function. */
async function undoHistory(s: string): Promise<void> {
  await sql(
    dsn,
    `DROP FUNCTION ${s}.tenxgraph_put_checkpoint(text, text, text, bigint, bigint, text, text,
       integer, text, jsonb, text, jsonb, jsonb, jsonb, text[], jsonb, text[], jsonb, text[],
       jsonb, jsonb, integer)`,
  );
  await sql(
    dsn,
    `DROP FUNCTION ${s}.tenxgraph_child_transcript(text, bigint, jsonb, integer, integer, text[],
       text[], text[])`,
  );
  await sql(dsn, `DROP FUNCTION ${s}.tenxgraph_transcript_seqs(jsonb, integer)`);
  await sql(dsn, `DROP FUNCTION ${s}.tenxgraph_seq_ranges(integer[])`);
  await sql(dsn, `DROP INDEX ${s}.messages_by_id`);
  await sql(
    dsn,
    `ALTER TABLE ${s}.messages DROP CONSTRAINT messages_pkey,
       ADD PRIMARY KEY (thread_id, message_id), ADD UNIQUE (thread_id, seq)`,
  );
  await sql(dsn, `ALTER TABLE ${s}.threads DROP COLUMN next_seq, DROP COLUMN delete_after`);
  await sql(
    dsn,
    `ALTER TABLE ${s}.states DROP COLUMN parent_version, DROP COLUMN node, DROP COLUMN run_id,
       DROP COLUMN message_count, DROP COLUMN message_ranges, DROP COLUMN frontier`,
  );
}

describe("PgCheckpointer migrating a ledger to leases", () => {
  it("keeps every row; a started claim's lease is its last heartbeat plus the old default 3000 ms", async () => {
    const longAgo = new Date(Date.now() - 60_000);
    const justNow = new Date();
    await schemaBeforeLeases([
      ["dead", "started", longAgo],
      ["live", "started", justNow],
      ["done", "completed", null],
    ]);

    const store = sharedStore(schema, { redis: false });
    opened.push(store);
    const entries = await store.listCalls("t");
    expect(entries.map((e) => [e.key, e.status, e.attempt])).toEqual([
      ["dead", "started", 1],
      ["live", "started", 1],
      ["done", "completed", 1],
    ]);
    const [dead, live, done] = entries as [LedgerEntry, LedgerEntry, LedgerEntry];
    const lease = (e: LedgerEntry) => (e.status === "started" ? e : null);
    expect(lease(dead)?.leaseExpiresAt).toBe(new Date(longAgo.getTime() + 3000).toISOString());
    expect(lease(live)?.leaseExpiresAt).toBe(new Date(justNow.getTime() + 3000).toISOString());
    // The dead claim's lease ran out long ago; the live one's has not.
    expect(lease(dead)!.leaseExpiresInMs).toBeLessThan(-50_000);
    expect(lease(live)!.leaseExpiresInMs).toBeGreaterThan(0);
    expect(done).toMatchObject({ status: "completed", result: "charged" });
    expect(done).not.toHaveProperty("leaseExpiresAt");
    const versions = await sql<{ version: number }>(
      dsn,
      `SELECT version FROM ${pg.escapeIdentifier(schema)}.tenxgraph_schema ORDER BY version`,
    );
    expect(versions.map((row) => row.version)).toEqual(versions.map((_, i) => i + 1));

    // The replaced claim function takes over the dead claim with the new claimant's lease.
    const claim = { key: "dead", toolName: "charge_card", ownerRunId: "new-run", leaseMs: 9000 };
    expect(await store.claimCalls("t", [{ ...claim, expectedAttempt: 1 }])).toEqual([
      { won: true, key: "dead", attempt: 2 },
    ]);
    const [taken] = await store.getCalls("t", ["dead"]);
    const held = lease(taken!)!;
    expect(Date.parse(held.leaseExpiresAt) - Date.parse(held.heartbeatAt)).toBe(9000);
  });
});
