/**
 * A checkpoint read from the Redis copy names the thread's parent as PostgreSQL's row does:
 * whether the copy was cached by this release, by a later write that did not name the parent,
 * or by a release that did not cache the field at all.
 */
import { randomUUID } from "node:crypto";
import type { CheckpointWrite } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import { afterAll, describe, expect, it } from "vitest";
import { redisCommand } from "@tenxgraph/test-servers";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";

const schema = freshSchema("parent_cache");
const keyPrefix = `parent-cache-${randomUUID()}:`;
const store: PgCheckpointer = sharedStore(schema, { cacheKeyPrefix: keyPrefix });

afterAll(async () => {
  await store.close();
  await dropSchema(testPostgresDsn(), schema);
});

function write(threadId: string, expectedVersion: number, overrides: Partial<CheckpointWrite>) {
  return {
    threadId,
    incarnation: "life",
    userId: null,
    expectedVersion,
    step: expectedVersion + 1,
    currentNode: "MAIN",
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
    ...overrides,
  } satisfies CheckpointWrite;
}

/** The thread's cached checkpoint, once the asynchronous refresh stored version `version`. */
async function cachedAt(threadId: string, version: number) {
  const key = `${keyPrefix}thread:${threadId}`;
  await expect
    .poll(() => redisCommand(testRedisUrl(), ["HGET", key, "version"]))
    .toBe(String(version));
  const json = await redisCommand(testRedisUrl(), ["HGET", key, "checkpoint"]);
  return { key, checkpoint: JSON.parse(json) as Record<string, unknown> };
}

/** A family as a subgraph run writes it: the child names its parent on its first write. */
async function family() {
  const parent = `parent-${randomUUID()}`;
  const child = `${parent}|WORKER@1`;
  await store.putCheckpoint(write(parent, 0, {}));
  await store.putCheckpoint(write(child, 0, { parentThreadId: parent }));
  return { parent, child };
}

describe("the parent of a thread read from the Redis cache", () => {
  it("is cached with the checkpoint of a child's first write and read back from it", async () => {
    const { parent, child } = await family();
    const { key, checkpoint } = await cachedAt(child, 1);
    expect(checkpoint).toMatchObject({ parentThreadId: parent });
    // Marked so the read below is known to come from the copy, not from PostgreSQL.
    await redisCommand(testRedisUrl(), [
      "HSET",
      key,
      "checkpoint",
      JSON.stringify({ ...checkpoint, values: { from: "cache" } }),
    ]);
    expect(await store.getCheckpoint(child)).toMatchObject({
      values: { from: "cache" },
      parentThreadId: parent,
    });
    expect((await store.getCheckpoint(parent))?.parentThreadId).toBeNull();
  });

  it("comes from the row for a copy a release without the field cached", async () => {
    const { parent, child } = await family();
    const { key, checkpoint } = await cachedAt(child, 1);
    const { parentThreadId: _, ...older } = checkpoint;
    await redisCommand(testRedisUrl(), [
      "HSET",
      key,
      "checkpoint",
      JSON.stringify({ ...older, values: { from: "an older release's copy" } }),
    ]);
    // Still served from the copy (the read costs no more), with the row's parent.
    expect(await store.getCheckpoint(child)).toMatchObject({
      values: { from: "an older release's copy" },
      parentThreadId: parent,
    });
  });

  it("stays the recorded one after a later write that names none", async () => {
    const { parent, child } = await family();
    await store.putCheckpoint(write(child, 1, { parentThreadId: null }));
    await cachedAt(child, 2);
    expect((await store.getCheckpoint(child))?.parentThreadId).toBe(parent);
  });
});
