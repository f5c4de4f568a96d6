import type { Checkpointer } from "../../storage/checkpointer.js";
import { Message } from "../../messages/message.js";
import type { CheckpointerHarness } from "./checkpointer-harness.js";
import {
  assertions,
  checkpointWrite,
  claim,
  createThread,
  LEASE_MS,
  newThreadId,
  tick,
} from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** Creates a thread with a message, a completed and a started call, and a stop request. */
async function populatedThread(checkpointer: Checkpointer, userId: string) {
  const message = Message.user("hello");
  const threadId = await createThread(checkpointer, { userId, newMessages: [message] });
  await checkpointer.claimCalls(threadId, [
    claim("m1:call_1", "run-a"),
    claim("m1:call_2", "run-a"),
  ]);
  await checkpointer.completeCall(threadId, { key: "m1:call_1", attempt: 1 }, "done");
  await checkpointer.requestStop(threadId);
  return { threadId, message };
}

/** Everything the store holds about one thread, for before/after comparisons. */
async function snapshot(checkpointer: Checkpointer, threadId: string) {
  return {
    checkpoint: await checkpointer.getCheckpoint(threadId),
    messages: await checkpointer.listMessages(threadId),
    // The time left on a started entry's lease changes with every read; the rest must not.
    calls: (await checkpointer.listCalls(threadId)).map((entry) => ({
      ...entry,
      leaseExpiresInMs: undefined,
    })),
    stop: await checkpointer.countStopRequests(threadId),
  };
}

/** Thread listing and deletion, isolation between threads, and the store's lifecycle. */
export function threadsConformance(
  get: GetCheckpointer,
  test: TestApi,
  harness: CheckpointerHarness,
): void {
  const { describe, it, expect } = test;
  const { expectErrorCode } = assertions(expect);
  describe("threads", () => {
    it("lists threads most recently updated first, paged", async () => {
      const checkpointer = get();
      const userId = `user-${newThreadId()}`;
      const ids: string[] = [];
      for (const name of ["a", "b", "c"]) {
        ids.push(await createThread(checkpointer, { userId, values: { name } }));
        await tick();
      }
      const [a, b, c] = ids as [string, string, string];
      await checkpointer.putCheckpoint(checkpointWrite(a, 1, { status: "completed" }));

      const listed = await checkpointer.listThreads({ userId });
      expect(listed.map((t) => t.threadId)).toEqual([a, c, b]);
      const checkpointA = await checkpointer.getCheckpoint(a);
      expect(listed[0]).toEqual({
        threadId: a,
        userId,
        status: "completed",
        version: 2,
        parentThreadId: null,
        updatedAt: checkpointA?.updatedAt,
      });
      const page = async (p: { limit?: number; offset?: number }) =>
        (await checkpointer.listThreads({ userId, ...p })).map((t) => t.threadId);
      expect(await page({ limit: 2 })).toEqual([a, c]);
      expect(await page({ offset: 1 })).toEqual([c, b]);
      expect(await page({ offset: 1, limit: 1 })).toEqual([c]);
      expect(await page({ offset: 3 })).toEqual([]);
      expect(await page({ limit: Infinity })).toEqual([a, c, b]);
    });

    it("moves a thread up the listing when it is created or its status changes, not on every step", async () => {
      const checkpointer = get();
      const userId = `user-${newThreadId()}`;
      const a = await createThread(checkpointer, { userId });
      await tick();
      const b = await createThread(checkpointer, { userId });
      const listed = async () =>
        (await checkpointer.listThreads({ userId })).map((thread) => thread.threadId);

      // A step that keeps the status leaves the order (so a store need not touch its index).
      await checkpointer.putCheckpoint(checkpointWrite(a, 1, { userId }));
      expect(await listed()).toEqual([b, a]);
      await checkpointer.putCheckpoint(checkpointWrite(a, 2, { userId, status: "completed" }));
      expect(await listed()).toEqual([a, b]);
    });

    it("filters threads by userId", async () => {
      const checkpointer = get();
      const [alice, bob] = [`alice-${newThreadId()}`, `bob-${newThreadId()}`];
      const aliceThreads = [
        await createThread(checkpointer, { userId: alice }),
        await createThread(checkpointer, { userId: alice }),
      ];
      const bobThread = await createThread(checkpointer, { userId: bob });
      await createThread(checkpointer, { userId: null });

      const listed = await checkpointer.listThreads({ userId: alice });
      expect(listed.map((t) => t.threadId).sort()).toEqual([...aliceThreads].sort());
      expect(listed.every((t) => t.userId === alice)).toBe(true);
      expect((await checkpointer.listThreads({ userId: bob })).map((t) => t.threadId)).toEqual([
        bobThread,
      ]);
      expect(await checkpointer.listThreads({ userId: `nobody-${newThreadId()}` })).toEqual([]);
    });

    it("deletes a thread with its checkpoint, messages, ledger and stop request", async () => {
      const checkpointer = get();
      const userId = `user-${newThreadId()}`;
      const { threadId, message } = await populatedThread(checkpointer, userId);

      await checkpointer.deleteThread(threadId);
      expect(await snapshot(checkpointer, threadId)).toEqual({
        checkpoint: null,
        messages: [],
        calls: [],
        stop: 0,
      });
      expect(await checkpointer.getCalls(threadId, ["m1:call_1", "m1:call_2"])).toEqual([]);
      expect(await checkpointer.listThreads({ userId })).toEqual([]);

      // Nothing lingers: the id starts over as a new thread with a fresh transcript and ledger.
      const again = checkpointWrite(threadId, 0, { newMessages: [message] });
      expect(await checkpointer.putCheckpoint(again)).toBe(1);
      const [reclaim] = await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-b")]);
      expect(reclaim).toEqual({ won: true, key: "m1:call_1", attempt: 1 });
      expect(await checkpointer.listMessages(threadId)).toEqual([message]);
    });

    it("refuses a write of a deleted thread's life on a new thread of the same id", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer, { values: { owner: "first" } });
      // A run of the first life read version 1, then the thread was deleted and created again
      // (another life, which reached version 1 too): the late write must not land there.
      const late = checkpointWrite(threadId, 1, { values: { owner: "first, written late" } });
      await checkpointer.deleteThread(threadId);
      const secondLife = { incarnation: `second-life-of-${threadId}` };
      await checkpointer.putCheckpoint(
        checkpointWrite(threadId, 0, { ...secondLife, values: { owner: "second" } }),
      );

      await expectErrorCode(checkpointer.putCheckpoint(late), "STORAGE_CONFLICT_001");
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({
        ...secondLife,
        version: 1,
        values: { owner: "second" },
      });
      // The new life's own writes go on.
      const next = checkpointWrite(threadId, 1, { ...secondLife, values: { owner: "second" } });
      expect(await checkpointer.putCheckpoint(next)).toBe(2);
    });

    it("leaves other threads untouched when deleting one", async () => {
      const checkpointer = get();
      const userId = `user-${newThreadId()}`;
      const doomed = await populatedThread(checkpointer, userId);
      const kept = await populatedThread(checkpointer, userId);
      const before = await snapshot(checkpointer, kept.threadId);
      expect(before.calls).toHaveLength(2);

      await checkpointer.deleteThread(doomed.threadId);
      expect(await snapshot(checkpointer, kept.threadId)).toEqual(before);
      const listed = await checkpointer.listThreads({ userId });
      expect(listed.map((t) => t.threadId)).toEqual([kept.threadId]);
      await expect(checkpointer.deleteThread(newThreadId())).resolves.toBeUndefined();
    });

    it("keeps the same ledger key and message id on two threads independent", async () => {
      const checkpointer = get();
      const shared = Message.user("same id on both threads");
      const one = await createThread(checkpointer, { newMessages: [shared] });
      const two = await createThread(checkpointer, { newMessages: [shared] });
      expect(await checkpointer.listMessages(two)).toEqual([shared]);

      const key = "m1:call_1";
      const results = await Promise.all(
        [one, two].map((threadId) => checkpointer.claimCalls(threadId, [claim(key, threadId)])),
      );
      expect(results.map(([r]) => r)).toEqual([
        { won: true, key, attempt: 1 },
        { won: true, key, attempt: 1 },
      ]);
      await checkpointer.completeCall(one, { key, attempt: 1 }, "one's result");
      await checkpointer.claimCalls(two, [claim(key, "takeover", 1)]);

      expect(await checkpointer.listCalls(one)).toMatchObject([
        { status: "completed", attempt: 1, ownerRunId: one, result: "one's result" },
      ]);
      expect(await checkpointer.listCalls(two)).toMatchObject([
        { status: "started", attempt: 2, ownerRunId: "takeover" },
      ]);
    });

    it("runs setup() more than once without losing data", async () => {
      const checkpointer = get();
      await checkpointer.setup();
      const threadId = await createThread(checkpointer, { values: { kept: true } });
      await checkpointer.setup();
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({ values: { kept: true } });
    });

    it("rejects every call after close() with STORAGE_FAILURE_001", async () => {
      const checkpointer = await harness.create();
      try {
        const threadId = await createThread(checkpointer);
        await checkpointer.close();
        const ref = { key: "k", attempt: 1 };
        const calls: Record<string, () => Promise<unknown>> = {
          setup: () => checkpointer.setup(),
          getCheckpoint: () => checkpointer.getCheckpoint(threadId),
          putCheckpoint: () => checkpointer.putCheckpoint(checkpointWrite(threadId, 1)),
          listMessages: () => checkpointer.listMessages(threadId),
          listThreads: () => checkpointer.listThreads(),
          deleteThread: () => checkpointer.deleteThread(threadId),
          requestStop: () => checkpointer.requestStop(threadId),
          countStopRequests: () => checkpointer.countStopRequests(threadId),
          getCalls: () => checkpointer.getCalls(threadId, ["k"]),
          claimCalls: () => checkpointer.claimCalls(threadId, [claim("k", "run-a")]),
          completeCall: () => checkpointer.completeCall(threadId, ref, "x"),
          releaseCall: () => checkpointer.releaseCall(threadId, ref),
          heartbeatCalls: () => checkpointer.heartbeatCalls(threadId, [ref], LEASE_MS),
          listCalls: () => checkpointer.listCalls(threadId),
        };
        for (const [method, call] of Object.entries(calls)) {
          await expectErrorCode(call(), "STORAGE_FAILURE_001", undefined, method);
        }
        // close() itself stays idempotent, so cleanup code may always call it.
        await expect(checkpointer.close()).resolves.toBeUndefined();
      } finally {
        await harness.destroy?.(checkpointer);
      }
    });
  });
}
