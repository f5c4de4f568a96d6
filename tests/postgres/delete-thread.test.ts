/**
 * `deleteThread` on PostgreSQL with Redis in front: the thread's rows go from every table,
 * checked with SQL of the test's own, and its Redis hash goes too, so no worker reads it back.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Message } from "@tenxgraph/core";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGraph } from "../concurrency/support/agent-graph.js";
import { effectTool } from "../concurrency/support/effect-tool.js";
import { dropStore } from "../support/fresh-store.js";
import { redisCommand } from "@tenxgraph/test-servers";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import { freshSchema, sharedStore } from "../../packages/postgres/src/support/pg-store.js";
import { threadCacheKey } from "./support/cache-key.js";
import { threadRowCounts } from "../../packages/postgres/src/support/pg-inspect.js";

const dsn = testPostgresDsn();
const schema = freshSchema("delete_thread");
const logPath = join(tmpdir(), `tenxgraph-delete-thread-${randomUUID()}.jsonl`);
let store: PgCheckpointer;
/** Another worker on the same store and the same Redis. */
let peer: PgCheckpointer;

beforeAll(async () => {
  store = sharedStore(schema);
  peer = sharedStore(schema);
  await store.setup();
});

afterAll(async () => {
  await Promise.all([store?.close(), peer?.close()]);
  await dropStore({ kind: "postgres", dsn, schema });
  rmSync(logPath, { force: true });
});

function app(checkpointer: PgCheckpointer) {
  return agentGraph({
    checkpointer,
    tools: [effectTool({ name: "note", logPath })],
    turns: [[{ name: "note", tag: "delete" }]],
  });
}

/** A thread with states, messages, a ledger entry, a stop request and a Redis hash. */
async function fullThread(threadId: string): Promise<void> {
  const result = await app(store).invoke({ messages: [Message.user("note")] }, { threadId });
  expect(result.status).toBe("completed");
  await app(store).stop({ threadId });
  await peer.getCheckpoint(threadId);
}

async function cached(threadId: string): Promise<boolean> {
  const key = await threadCacheKey(dsn, schema, threadId);
  return (await redisCommand(testRedisUrl(), ["EXISTS", key])) === "1";
}

describe("deleteThread", () => {
  it("removes the thread's states, messages, ledger rows, stop requests and Redis hash, and nothing of other threads", async () => {
    await fullThread("doomed");
    await fullThread("kept");
    const kept = await threadRowCounts(dsn, schema, "kept");
    expect(await threadRowCounts(dsn, schema, "doomed")).toEqual(kept);
    expect(Object.values(kept).every((count) => count > 0)).toBe(true);
    expect(await cached("doomed")).toBe(true);

    await app(store).deleteThread({ threadId: "doomed" });

    expect(await threadRowCounts(dsn, schema, "doomed")).toEqual({
      threads: 0,
      states: 0,
      messages: 0,
      tool_executions: 0,
      stop_requests: 0,
    });
    expect(await cached("doomed")).toBe(false);
    expect(await threadRowCounts(dsn, schema, "kept")).toEqual(kept);
    expect(await cached("kept")).toBe(true);
  });

  it("another worker sees no trace of it, and the id starts a new thread from scratch", async () => {
    const view = app(peer);
    expect(await view.getState({ threadId: "doomed" })).toBeNull();
    expect(await view.getToolLedger({ threadId: "doomed" })).toEqual([]);
    expect(await peer.listMessages("doomed")).toEqual([]);
    expect(await peer.countStopRequests("doomed")).toBe(0);
    await expect(view.invoke(null, { threadId: "doomed" })).rejects.toMatchObject({
      code: "THREAD_001",
    });

    const again = await view.invoke({ messages: [Message.user("anew")] }, { threadId: "doomed" });
    expect(again.status).toBe("completed");
    expect(again.state.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect((await threadRowCounts(dsn, schema, "doomed")).states).toBe(again.version);
  });
});
