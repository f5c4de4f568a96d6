/**
 * A private Redis stopped in the middle of a run and started again: PostgreSQL alone carries the
 * run, the outage is logged and counted, and the cache fills again once Redis is back.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Message } from "@tenxgraph/core";
import { StorageError, type Checkpointer } from "@tenxgraph/core/storage";
import { FaultPoints, recordingLogger } from "@tenxgraph/core/testing";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGraph } from "../concurrency/support/agent-graph.js";
import { startsByKey } from "../concurrency/support/effect-log.js";
import { effectTool } from "../concurrency/support/effect-tool.js";
import { dropStore } from "../support/fresh-store.js";
import { RedisServer, redisCommand } from "@tenxgraph/test-servers";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { freshSchema, sharedStore } from "../../packages/postgres/src/support/pg-store.js";
import { threadCacheKey } from "./support/cache-key.js";
import { eventually } from "./support/eventually.js";
import { gate, type Gate } from "./support/gate.js";
import { globalCounters } from "./support/global-meter.js";
import { sql, stateRows } from "../../packages/postgres/src/support/pg-inspect.js";

const CACHE_FAILURES = "tenxgraph.storage.cache_failures";
// Before any checkpointer exists: the cache counts its failures on the global meter.
const counters = globalCounters();
const dsn = testPostgresDsn();
const schema = freshSchema("redis_outage");
const logPath = join(tmpdir(), `tenxgraph-redis-outage-${randomUUID()}.jsonl`);
const logger = recordingLogger();
let redis: RedisServer;
let store: PgCheckpointer;
let held: Gate = gate();

beforeAll(async () => {
  redis = await RedisServer.start({ name: "outage" });
  store = sharedStore(schema, { redis: false, redisUrl: redis.url, logger });
  await store.setup();
});

afterAll(async () => {
  await store?.close();
  await redis?.destroy();
  await dropStore({ kind: "postgres", dsn, schema });
  rmSync(logPath, { force: true });
});

/**
 * The agent: one model turn asking for two tools, the first held at `held` after its effect.
 * On the file's store unless another worker's is given.
 */
const app = (checkpointer: Checkpointer = store, faultPoints?: FaultPoints) =>
  agentGraph({
    checkpointer,
    tools: [
      effectTool({ name: "note_a", logPath, hold: () => held.pass() }),
      effectTool({ name: "note_b", logPath }),
    ],
    turns: [
      [
        { name: "note_a", tag: "outage" },
        { name: "note_b", tag: "outage" },
      ],
    ],
    compile: { faultPoints },
  });

async function cachedVersion(threadId: string): Promise<number | null> {
  const version = await redisCommand(redis.url, [
    "HGET",
    await threadCacheKey(dsn, schema, threadId),
    "version",
  ]);
  return version === "" ? null : Number(version);
}

async function durableVersion(threadId: string): Promise<number> {
  const [row] = await sql<{ version: string }>(
    dsn,
    `SELECT version FROM ${schema}.threads WHERE thread_id = $1`,
    [threadId],
  );
  return Number(row?.version);
}

describe("Redis stopped in the middle of a run", () => {
  const threadId = "outage";

  it("the run finishes on PostgreSQL; the outage is logged once and counted", async () => {
    const run = app().invoke({ messages: [Message.user("note it")] }, { threadId });
    await held.reached;
    // Until now every write went to the cache too.
    expect(await cachedVersion(threadId)).toBe(await durableVersion(threadId));
    const failuresBefore = await counters.sum(CACHE_FAILURES);
    await redis.stop();
    held.open();

    const result = await run;
    expect(result.status).toBe("completed");
    expect(await durableVersion(threadId)).toBe(result.version);
    const unavailable = logger.find("warn", "Redis cache unavailable");
    expect(unavailable).toHaveLength(1);
    expect(await counters.sum(CACHE_FAILURES)).toBeGreaterThan(failuresBefore);
    // The whole transcript is in PostgreSQL, read by a store that has no cache at all.
    const reader = sharedStore(schema, { redis: false });
    try {
      expect(await reader.listMessages(threadId)).toEqual(
        JSON.parse(JSON.stringify(result.state.messages)),
      );
    } finally {
      await reader.close();
    }
    expect([...startsByKey(logPath, threadId).values()]).toEqual([1, 1]);
  });

  it("Redis started again: the cache fills on the next read, and writes reach it again", async () => {
    await redis.start();
    await logger.next((record) => record.message === "Redis cache is back");
    // Memory-only Redis came back empty; a read goes to PostgreSQL and fills the cache.
    const durable = await durableVersion(threadId);
    const refilled = await eventually("the thread's hash is back in Redis", async () => {
      await store.getCheckpoint(threadId);
      return (await cachedVersion(threadId)) ?? undefined;
    });
    expect(refilled).toBe(durable);

    held = gate();
    held.open();
    const next = await app().invoke({ messages: [Message.user("again")] }, { threadId });
    expect(next.status).toBe("completed");
    expect(await cachedVersion(threadId)).toBe(next.version);
    expect(await durableVersion(threadId)).toBe(next.version);
  });
});

describe("Redis frozen (SIGSTOP) in the middle of a run", () => {
  it("each cache call gives up after its timeout; the run finishes on PostgreSQL and reads stay right", async () => {
    const threadId = "frozen";
    held = gate();
    const run = app().invoke({ messages: [Message.user("note it")] }, { threadId });
    await held.reached;
    const pid = await redisPid();
    process.kill(pid, "SIGSTOP");
    try {
      held.open();
      const result = await run;
      expect(result.status).toBe("completed");
      expect(await durableVersion(threadId)).toBe(result.version);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // The writes the frozen Redis queued land late, never moving the copy backwards, and a
    // read returns what PostgreSQL holds.
    const checkpoint = await store.getCheckpoint(threadId);
    expect(checkpoint).toMatchObject({
      version: await durableVersion(threadId),
      status: "completed",
    });
  });
});

/** The private Redis server's process id, as it reports it. */
async function redisPid(): Promise<number> {
  const info = await redisCommand(redis.url, ["INFO", "server"]);
  return Number(/process_id:(\d+)/.exec(info)![1]);
}

describe("a worker cut off from Redis while the others still reach it", () => {
  const threadId = "cut-off";

  it("leaves no stale copy behind when it is gone: invoke(null) elsewhere continues its failed run", async () => {
    // The worker authenticates as a Redis user of its own, so it alone can be cut off.
    await redisCommand(redis.url, [
      "ACL",
      "SETUSER",
      "cutoff",
      "on",
      ">secret",
      "~*",
      "&*",
      "+@all",
    ]);
    const worker = sharedStore(schema, {
      redis: false,
      redisUrl: `redis://cutoff:secret@127.0.0.1:${redis.port}`,
    });
    held = gate();
    held.open();
    const first = await app(worker).invoke({ messages: [Message.user("first")] }, { threadId });
    expect(await cachedVersion(threadId)).toBe(first.version);

    await redisCommand(redis.url, ["ACL", "SETUSER", "cutoff", "off"]);
    await redisCommand(redis.url, ["CLIENT", "KILL", "USER", "cutoff"]);
    // Its next run fails at the tool step's write (a database blip there), after the run's
    // start write and model step reached PostgreSQL but not Redis.
    const faults = new FaultPoints().arm(
      "step.before_write",
      () => {
        throw new StorageError("putCheckpoint", new Error("connection terminated unexpectedly"));
      },
      { when: thirdWrite(), times: 1 },
    );
    const second = app(worker, faults).invoke({ messages: [Message.user("again")] }, { threadId });
    await expect(second).rejects.toMatchObject({ code: "STORAGE_FAILURE_001" });
    await worker.close();
    const durable = (await stateRows(dsn, schema, threadId)).at(-1)!;
    expect(durable).toMatchObject({ status: "failed", currentNode: "TOOL" });

    // Another worker, whose Redis is fine, continues the thread it finds failed at TOOL.
    const continued = await app(store).invoke(null, { threadId });
    const why = "invoke(null) continues from PostgreSQL's failed step, not a stale cached copy";
    expect(continued.version, why).toBeGreaterThan(durable.version);
    expect(continued.state.messages.map((message) => Message.text(message))).toContain("again");
    expect((await stateRows(dsn, schema, threadId)).at(-1)).toMatchObject({
      status: "completed",
      currentNode: null,
    });
  });
});

/** True at the third durable write of a run: after the start write and the model's step, the tool step's. */
function thirdWrite(): () => boolean {
  let writes = 0;
  return () => ++writes === 3;
}
