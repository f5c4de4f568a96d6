import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { newThreadWrite } from "./support/new-thread-write.js";

let folder: string;
let path: string;
const children: ChildProcessWithoutNullStreams[] = [];
beforeEach(() => {
  folder = join(tmpdir(), `tenxgraph-sqlite-lock-${randomUUID()}`);
  mkdirSync(folder);
  path = join(folder, "threads.db");
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(folder, { recursive: true, force: true });
});

/**
 * Another process that opens `dbPath` with plain better-sqlite3 (default rollback journal, as a
 * fresh file or another program's file is) and takes the write lock with BEGIN IMMEDIATE. It
 * prints "locked", then commits on "release" from stdin, or by itself after `autoReleaseMs`.
 */
async function lockHolder(
  dbPath: string,
  autoReleaseMs: number | null,
): Promise<ChildProcessWithoutNullStreams> {
  const script = `
    const Database = require("better-sqlite3");
    const db = new Database(process.argv[1]);
    db.exec("BEGIN IMMEDIATE");
    db.exec("CREATE TABLE IF NOT EXISTS app_notes (body TEXT)");
    process.stdout.write("locked\\n");
    const release = () => { db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); process.exit(0); };
    const auto = Number(process.argv[2]);
    if (auto > 0) setTimeout(release, auto);
    process.stdin.on("data", (d) => { if (String(d).includes("release")) release(); });
  `;
  const cwd = fileURLToPath(new URL("..", import.meta.url)); // packages/sqlite: resolves better-sqlite3
  const child = spawn(process.execPath, ["-e", script, dbPath, String(autoReleaseMs ?? 0)], {
    cwd,
  });
  children.push(child);
  await waitFor(child, "locked");
  return child;
}

function waitFor(child: ChildProcessWithoutNullStreams, word: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += String(d)));
    child.stdout.on("data", (d) => {
      out += String(d);
      if (out.includes(word)) resolve();
    });
    child.once("exit", (code) => {
      if (!out.includes(word)) reject(new Error(`lock holder exited ${code}: ${err}`));
    });
  });
}

describe("SqliteCheckpointer while another process holds the write lock", () => {
  it("setup() waits for another process's write lock (busyTimeoutMs) instead of failing at once in the switch to WAL", async () => {
    // Another process is writing the brand-new file (as a second tenxgraph process in its own
    // setup, or the application, would). It releases the lock long before busyTimeoutMs.
    await lockHolder(path, 1000);
    const store = new SqliteCheckpointer({ path, busyTimeoutMs: 10_000 });
    try {
      // `PRAGMA journal_mode = WAL` gets SQLITE_BUSY at once for a lock upgrade (the busy
      // handler is not called): the store must retry it within busyTimeoutMs.
      await expect(store.setup()).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("a group-commit batch that cannot take the write lock rejects every queued completion and records none", async () => {
    const store = new SqliteCheckpointer({ path, busyTimeoutMs: 1 });
    const threadId = `t-${randomUUID()}`;
    await store.putCheckpoint(newThreadWrite(threadId));
    const claims = ["a", "b"].map((key) => ({
      key,
      toolName: "t",
      ownerRunId: "r",
      leaseMs: 3000,
      expectedAttempt: 0,
    }));
    await store.claimCalls(threadId, claims);
    const holder = await lockHolder(path, null);
    const outcomes = await Promise.allSettled([
      store.completeCall(threadId, { key: "a", attempt: 1 }, "A"),
      store.completeCall(threadId, { key: "b", attempt: 1 }, "B"),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({
      code: "STORAGE_FAILURE_001",
      message: expect.stringContaining("stayed locked by another connection"),
    });
    const released = waitFor(holder, "released");
    holder.stdin.write("release\n");
    await released;
    const entries = await store.listCalls(threadId);
    expect(entries.map((entry) => entry.status)).toEqual(["started", "started"]);
    // The claims are still held: the same attempts can record once the lock is free.
    expect(await store.completeCall(threadId, { key: "a", attempt: 1 }, "A")).toBe(true);
    await store.close();
  });
});
