/**
 * What Redis holds of a thread carries its history: a cached step keeps its transcript change
 * and its place (parent, node, run) until it is written durably, and a checkpoint cached by a
 * release that did not record that place is never served for the thread's head.
 */
import { randomUUID } from "node:crypto";
import { Message } from "@tenxgraph/core";
import type { CheckpointWrite } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import { afterAll, describe, expect, it } from "vitest";
import { redisCommand } from "@tenxgraph/test-servers";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";

const schema = freshSchema("history_cache");
const keyPrefix = `history-cache-${randomUUID()}:`;
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

/** The thread's hash field in Redis, once the asynchronous refresh stored version `version`. */
async function cachedAt(threadId: string, version: number): Promise<string> {
  const key = `${keyPrefix}thread:${threadId}`;
  await expect
    .poll(() => redisCommand(testRedisUrl(), ["HGET", key, "version"]))
    .toBe(String(version));
  return key;
}

describe("the Redis cache of a thread with history", () => {
  it("keeps a cached step's transcript change, parent, node and run until it is written", async () => {
    const threadId = `cached-step-${randomUUID()}`;
    const [a, b, c, d] = ["a", "b", "c", "d"].map((text) => Message.user(text)) as Message[];
    await store.putCheckpoint(write(threadId, 0, { newMessages: [a!, b!] }));
    await store.putCheckpoint(write(threadId, 1, { newMessages: [c!] }));
    await cachedAt(threadId, 2);
    const step = write(threadId, 2, {
      parentVersion: 1,
      node: "MODEL",
      runId: "run-1",
      replacedMessages: [{ ...a!, content: "a, edited" } as Message],
      removedMessageIds: [b!.id],
      newMessages: [d!],
    });

    expect(await store.cacheStep!(step)).toBe(true);
    const cached = await store.getCachedStep!(threadId);
    expect(cached).toEqual(step);
    // Written durably as it came back, it is the fork and the edit it was.
    expect(await store.putCheckpoint(cached!)).toBe(3);
    expect((await store.listMessages(threadId)).map((m) => m.content)).toEqual(["a, edited", "d"]);
    expect(await store.getCheckpoint(threadId)).toMatchObject({
      version: 3,
      parentVersion: 1,
      node: "MODEL",
      runId: "run-1",
      messageCount: 2,
    });
  });

  it("reads the head from PostgreSQL when the cached copy does not record its parent", async () => {
    const threadId = `old-copy-${randomUUID()}`;
    await store.putCheckpoint(write(threadId, 0, { values: { from: "postgres" } }));
    const key = await cachedAt(threadId, 1);
    const json = await redisCommand(testRedisUrl(), ["HGET", key, "checkpoint"]);
    // The copy as a release before history cached it: no parentVersion, node or run.
    const { parentVersion: _, node: __, runId: ___, ...older } = JSON.parse(json);
    await redisCommand(testRedisUrl(), [
      "HSET",
      key,
      "checkpoint",
      JSON.stringify({ ...older, values: { from: "an older release's copy" } }),
    ]);

    expect(await store.getCheckpoint(threadId)).toMatchObject({
      values: { from: "postgres" },
      parentVersion: null,
      node: null,
      runId: null,
    });
  });
});
