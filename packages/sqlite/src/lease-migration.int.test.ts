import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { MIGRATIONS, SCHEMA_TABLE } from "./migrations.js";

let folder: string;
beforeEach(() => {
  folder = join(tmpdir(), `tenxgraph-sqlite-lease-${randomUUID()}`);
  mkdirSync(folder);
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** The schema version before claims carried leases. */
const BEFORE_LEASES = 2;

/** A file at schema 2 with a thread and, per row, `[key, status, heartbeat_at]` in its ledger. */
function fileBeforeLeases(path: string, rows: [string, string, string | null][]): void {
  const db = new Database(path);
  db.exec(`CREATE TABLE ${SCHEMA_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
  for (let version = 1; version <= BEFORE_LEASES; version++) {
    for (const statement of MIGRATIONS[version - 1]!.up) db.exec(statement);
    db.prepare(`INSERT INTO ${SCHEMA_TABLE} VALUES (?, ?)`).run(version, new Date().toISOString());
  }
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO threads (thread_id, user_id, status, version, message_count, write_seq,
                          created_at, updated_at)
     VALUES ('t', NULL, 'running', 1, 0, 1, ?, ?)`,
  ).run(now, now);
  const insert = db.prepare(
    `INSERT INTO tool_executions (thread_id, call_key, tool_name, status, attempt, owner_run_id,
                                  started_at, heartbeat_at, result_json, completed_at)
     VALUES ('t', ?, 'charge_card', ?, 1, 'old-run', ?, ?, ?, ?)`,
  );
  for (const [key, status, heartbeatAt] of rows) {
    const done = status === "completed";
    insert.run(
      key,
      status,
      heartbeatAt ?? now,
      heartbeatAt,
      done ? '"charged"' : null,
      done ? now : null,
    );
  }
  db.close();
}

describe("SqliteCheckpointer migrating a ledger to leases", () => {
  it("keeps every row; a started claim's lease is its last heartbeat plus the old default 3000 ms", async () => {
    const path = join(folder, "v2.db");
    const longAgo = new Date(Date.now() - 60_000).toISOString();
    const justNow = new Date().toISOString();
    fileBeforeLeases(path, [
      ["dead", "started", longAgo],
      ["live", "started", justNow],
      ["done", "completed", null],
    ]);

    const store = new SqliteCheckpointer({ path });
    try {
      const entries = await store.listCalls("t");
      expect(entries.map((e) => [e.key, e.status, e.attempt])).toEqual([
        ["dead", "started", 1],
        ["live", "started", 1],
        ["done", "completed", 1],
      ]);
      const [dead, live, done] = entries;
      const leaseOf = (e: unknown) => (e as { leaseExpiresAt: string }).leaseExpiresAt;
      expect(leaseOf(dead)).toBe(new Date(Date.parse(longAgo) + 3000).toISOString());
      expect(leaseOf(live)).toBe(new Date(Date.parse(justNow) + 3000).toISOString());
      // The dead claim's lease ran out long ago; the live one's has not.
      expect(dead).toMatchObject({ leaseExpiresInMs: expect.any(Number) });
      expect((dead as { leaseExpiresInMs: number }).leaseExpiresInMs).toBeLessThan(-50_000);
      expect((live as { leaseExpiresInMs: number }).leaseExpiresInMs).toBeGreaterThan(0);
      expect(done).toMatchObject({ status: "completed", result: "charged" });
      expect(done).not.toHaveProperty("leaseExpiresAt");
    } finally {
      await store.close();
    }
  });
});
