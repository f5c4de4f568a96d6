/**
 * Step 4 of the PostgreSQL schema (claim-leases) on a real server: claims get a lease column, every row is kept,
 * and a claim made before the step keeps the lease it had then (heartbeat + the old 3000 ms).
 */
import type { LedgerEntry } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { sql } from "../support/pg-inspect.js";
import { migrateAsPublished } from "../support/published-schema.js";

const dsn = testPostgresDsn();
const schema = freshSchema("lease_migration");
const opened: PgCheckpointer[] = [];

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  await dropSchema(dsn, schema);
});

/**
 * The schema as step 3 left it (published migrations 1 to 3), with a thread whose ledger holds
 * `rows`.
 */
async function schemaBeforeLeases(rows: [key: string, status: string, heartbeatAt: Date | null][]) {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await client.query(`SET search_path = ${pg.escapeIdentifier(schema)}`);
    await migrateAsPublished(client, 3);
  } finally {
    await client.end();
  }
  const s = pg.escapeIdentifier(schema);
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
