import { checkpointWrite, createThread, newThreadId } from "./fixtures.js";
import type { GetCheckpointer, GetPeer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/**
 * Stop requests: a per-thread count that any process sharing the store can raise. Runs compare
 * it with the count they saw at their start, so requests are never cleared.
 */
export function stopConformance(get: GetCheckpointer, test: TestApi, getPeer: GetPeer): void {
  const { describe, it, expect } = test;
  describe("stop requests", () => {
    it("counts no stop request by default, also for an unknown thread", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      expect(await checkpointer.countStopRequests(threadId)).toBe(0);
      expect(await checkpointer.countStopRequests(newThreadId())).toBe(0);
    });

    it("counts every request, repeated ones included", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.requestStop(threadId);
      expect(await checkpointer.countStopRequests(threadId)).toBe(1);
      await checkpointer.requestStop(threadId);
      await checkpointer.requestStop(threadId);
      expect(await checkpointer.countStopRequests(threadId)).toBe(3);
    });

    it("counts concurrent requests without losing one", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const parties = [checkpointer, getPeer()];
      await Promise.all(Array.from({ length: 8 }, (_, i) => parties[i % 2]!.requestStop(threadId)));
      expect(await checkpointer.countStopRequests(threadId)).toBe(8);
    });

    it("counts a stop requested before the thread's first write", async () => {
      // A run counts the requests before its start write creates the thread: a stop made in
      // between, from another process, is meant for that run.
      const checkpointer = get();
      const threadId = newThreadId();
      await getPeer().requestStop(threadId);
      expect(await checkpointer.countStopRequests(threadId)).toBe(1);
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 0));
      expect(await checkpointer.countStopRequests(threadId)).toBe(1);
    });

    it("reads the latest checkpoint and the stop count at once, with or without the thread", async () => {
      // What a run starts from: stops counted past this read are meant for it.
      const checkpointer = get();
      const threadId = newThreadId();
      expect(await checkpointer.getCheckpointAndStops(threadId)).toEqual({
        checkpoint: null,
        stopRequests: 0,
      });
      await getPeer().requestStop(threadId);
      expect(await checkpointer.getCheckpointAndStops(threadId)).toEqual({
        checkpoint: null,
        stopRequests: 1,
      });
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 0));
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 1));
      await checkpointer.requestStop(threadId);
      // Twice: a store with a cache answers the second from it.
      for (let read = 0; read < 2; read++) {
        const both = await checkpointer.getCheckpointAndStops(threadId);
        expect(both).toEqual({
          checkpoint: await checkpointer.getCheckpoint(threadId),
          stopRequests: 2,
        });
        expect(both.checkpoint).toMatchObject({ threadId, version: 2 });
      }
      const other = await createThread(checkpointer);
      expect(await checkpointer.getCheckpointAndStops(other)).toMatchObject({
        checkpoint: { threadId: other, version: 1 },
        stopRequests: 0,
      });
    });

    it("keeps stop requests per thread", async () => {
      const checkpointer = get();
      const stopped = await createThread(checkpointer);
      const other = await createThread(checkpointer);
      await checkpointer.requestStop(stopped);
      expect(await checkpointer.countStopRequests(other)).toBe(0);
      await checkpointer.requestStop(other);
      await checkpointer.requestStop(other);
      expect(await checkpointer.countStopRequests(stopped)).toBe(1);
      expect(await checkpointer.countStopRequests(other)).toBe(2);
    });
  });
}
