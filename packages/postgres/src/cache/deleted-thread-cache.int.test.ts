/**
 * A deleted thread never comes back from Redis. Its old copy may survive the delete there: the
 * deleting worker could not reach Redis, or another worker's cache refresh of the old thread
 * landed after the delete. Each case then reuses the id for another user's thread, brings it to
 * the old thread's version, and reads it: the new thread must show only its own state.
 */
import type { PgCheckpointer } from "@tenxgraph/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisGate, RedisServer, redisCommand } from "@tenxgraph/test-servers";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { ownedWrite, twoVersions } from "../support/owned-write.js";

const dsn = testPostgresDsn();
const schema = freshSchema("deleted_thread_cache");
const opened: PgCheckpointer[] = [];
let redis: RedisServer;
let gate: RedisGate;

beforeAll(async () => {
  // A private Redis: the test cuts a Redis user off, which would touch every file's workers.
  redis = await RedisServer.start({ name: "deleted-thread" });
  gate = await RedisGate.open(redis.url);
  await sharedStore(schema, { redis: false }).setup();
});

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  await gate?.close();
  await redis?.destroy();
  await dropSchema(dsn, schema);
});

/** A worker on the file's store, with Redis at `redisUrl`, or none for `null`. */
function worker(redisUrl: string | null): PgCheckpointer {
  const store = sharedStore(
    schema,
    redisUrl === null ? { redis: false } : { redis: false, redisUrl },
  );
  opened.push(store);
  return store;
}

/**
 * A worker whose Redis user the test can cut off (`ACL SETUSER … off` and `CLIENT KILL`), while
 * the other workers still reach the same Redis.
 */
async function workerToCutOff(
  user: string,
): Promise<{ store: PgCheckpointer; cutOff(): Promise<void> }> {
  await redisCommand(redis.url, ["ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all"]);
  const store = worker(`redis://${user}:secret@127.0.0.1:${redis.port}`);
  await store.setup();
  return {
    store,
    cutOff: async () => {
      await redisCommand(redis.url, ["ACL", "SETUSER", user, "off"]);
      await redisCommand(redis.url, ["CLIENT", "KILL", "USER", user]);
    },
  };
}

const bobsOwn = { version: 2, userId: "bob", values: { owner: "bob" } };

describe("a deleted thread's copy left in Redis", () => {
  it("by a delete that could not reach Redis: the id's new thread at the same version shows only its own state", async () => {
    const threadId = "reused-after-outage";
    const alice = worker(redis.url);
    await twoVersions(alice, threadId, "alice");
    // close() waits for the cache refreshes still on their way: Redis now holds alice's copy.
    await alice.close();
    const deleter = await workerToCutOff("deleter");
    expect(await deleter.store.getCheckpoint(threadId)).toMatchObject({ userId: "alice" });

    await deleter.cutOff();
    await deleter.store.deleteThread(threadId);

    const bob = worker(redis.url);
    await twoVersions(bob, threadId, "bob");
    expect(await bob.getCheckpoint(threadId)).toMatchObject(bobsOwn);
    expect(await worker(redis.url).getCheckpoint(threadId)).toMatchObject(bobsOwn);
  });

  it("by another worker's refresh landing after the delete: the id's new thread at the same version shows only its own state", async () => {
    const threadId = "reused-after-late-refresh";
    const writer = worker(null);
    await twoVersions(writer, threadId, "alice");
    // A reader misses the cache and reads PostgreSQL; its refresh of alice's copy is held.
    const reader = worker(gate.url);
    const deleter = worker(redis.url);
    // Set up beforehand, so the refresh is held only while the delete runs: far less than
    // the second after which the reader would give up waiting for Redis's answer.
    await deleter.setup();
    const held = gate.holdUpdate(threadId, 2);
    expect(await reader.getCheckpoint(threadId)).toMatchObject({ version: 2, userId: "alice" });
    await held;

    await deleter.deleteThread(threadId);
    const keys = Number(await redisCommand(redis.url, ["DBSIZE"]));
    gate.release();
    // The refresh lands after the delete; close() returns once Redis answered it.
    await reader.close();
    expect(Number(await redisCommand(redis.url, ["DBSIZE"])), "alice's copy is back").toBe(
      keys + 1,
    );

    await twoVersions(writer, threadId, "bob");
    expect(await worker(redis.url).getCheckpoint(threadId)).toMatchObject(bobsOwn);
  });

  it("as a cached step (durableCheckpointEveryStep: false): the id's new thread at the step's base shows no step of the old one", async () => {
    const threadId = "reused-after-cached-step";
    const alice = worker(redis.url);
    await alice.putCheckpoint(ownedWrite(threadId, "alice", 0));
    expect(await alice.cacheStep!(ownedWrite(threadId, "alice", 1))).toBe(true);
    await alice.close();
    const deleter = await workerToCutOff("step-deleter");
    await deleter.cutOff();
    await deleter.store.deleteThread(threadId);

    // Bob's thread reaches version 1, the old step's base, on a worker without Redis.
    await worker(null).putCheckpoint(ownedWrite(threadId, "bob", 0));
    const reader = worker(redis.url);
    // The step first: reading the checkpoint would refresh the cache and so drop the old entry.
    expect(await reader.getCachedStep!(threadId)).toBeNull();
    expect(await reader.getCheckpoint(threadId)).toMatchObject({ version: 1, userId: "bob" });
  });
});

describe("a deleted thread's descendants", () => {
  it("leave Redis with it: the copies of its child and grandchild are dropped too", async () => {
    const parent = "family-parent";
    const child = `${parent}|WORKER@1`;
    const grandchild = `${child}|INNER@1`;
    const writer = worker(redis.url);
    await writer.putCheckpoint(ownedWrite(parent, "alice", 0));
    await writer.putCheckpoint({ ...ownedWrite(child, "alice", 0), parentThreadId: parent });
    await writer.putCheckpoint({ ...ownedWrite(grandchild, "alice", 0), parentThreadId: child });
    // close() waits for the cache refreshes still on their way: Redis holds all three copies.
    await writer.close();
    const keys = Number(await redisCommand(redis.url, ["DBSIZE"]));

    await worker(redis.url).deleteThread(parent);
    expect(Number(await redisCommand(redis.url, ["DBSIZE"]))).toBe(keys - 3);
  });
});
