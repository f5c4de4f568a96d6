import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { newThreadWrite } from "./support/new-thread-write.js";

const folder = join(tmpdir(), `tenxgraph-sqlite-ledger-${randomUUID()}`);
const path = join(folder, "threads.db");
afterEach(() => rmSync(folder, { recursive: true, force: true }));

async function threadWithClaims(store: SqliteCheckpointer, keys: string[]): Promise<string> {
  const threadId = `t-${randomUUID()}`;
  await store.putCheckpoint(newThreadWrite(threadId, { currentNode: "TOOL" }));
  const claims = keys.map((key) => ({
    key,
    toolName: "t",
    ownerRunId: "run",
    leaseMs: 3000,
    expectedAttempt: 0,
  }));
  await store.claimCalls(threadId, claims);
  return threadId;
}

describe("SqliteCheckpointer completions (group commit)", () => {
  it("commits completions made in one turn together, each with its own fenced outcome", async () => {
    const store = new SqliteCheckpointer({ path });
    const threadId = await threadWithClaims(store, ["a", "b", "c"]);
    const outcomes = await Promise.all([
      store.completeCall(threadId, { key: "a", attempt: 1 }, "A"),
      store.completeCall(threadId, { key: "b", attempt: 2 }, "B"), // not the claiming attempt
      store.completeCall(threadId, { key: "c", attempt: 1 }, "C"),
    ]);
    expect(outcomes).toEqual([true, false, true]);
    const entries = await store.listCalls(threadId);
    expect(entries.map((entry) => [entry.key, entry.status])).toEqual([
      ["a", "completed"],
      ["b", "started"],
      ["c", "completed"],
    ]);
    await store.close();
  });

  it("has a completion durable in the file when its promise resolves", async () => {
    const store = new SqliteCheckpointer({ path });
    const threadId = await threadWithClaims(store, ["a"]);
    await store.completeCall(threadId, { key: "a", attempt: 1 }, { ok: 1 });
    // Another connection sees it at once: it was committed, not just queued.
    const db = new Database(path, { readonly: true });
    const row = db.prepare("SELECT status, result_json FROM tool_executions WHERE call_key = 'a'");
    expect(row.get()).toEqual({ status: "completed", result_json: '{"ok":1}' });
    db.close();
    await store.close();
  });

  it("commits completions still queued when close() is called", async () => {
    const store = new SqliteCheckpointer({ path });
    const threadId = await threadWithClaims(store, ["a"]);
    const pending = store.completeCall(threadId, { key: "a", attempt: 1 }, "A");
    await store.close();
    expect(await pending).toBe(true);
    const reopened = new SqliteCheckpointer({ path });
    expect(await reopened.listCalls(threadId)).toMatchObject([{ key: "a", status: "completed" }]);
    await reopened.close();
  });

  it("rejects a result JSON cannot hold without queuing it", async () => {
    const store = new SqliteCheckpointer({ path });
    const threadId = await threadWithClaims(store, ["a"]);
    const failure = store.completeCall(threadId, { key: "a", attempt: 1 }, { n: 1n });
    await expect(failure).rejects.toMatchObject({ code: "STORAGE_FAILURE_001" });
    expect(await store.listCalls(threadId)).toMatchObject([{ key: "a", status: "started" }]);
    await store.close();
  });
});

describe("SqliteCheckpointer claims", () => {
  it("refuses a claim on a thread that does not exist, saying so", async () => {
    const store = new SqliteCheckpointer({ path });
    const claim = { key: "k", toolName: "t", ownerRunId: "run", leaseMs: 3000, expectedAttempt: 0 };
    await expect(store.claimCalls("missing", [claim])).rejects.toMatchObject({
      code: "STORAGE_FAILURE_001",
      message: expect.stringContaining("thread 'missing' does not exist"),
    });
    await store.close();
  });
});
