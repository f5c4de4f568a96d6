import { createThread, newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** Stop requests: a per-thread flag that any process sharing the store can set and clear. */
export function stopConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  describe("stop requests", () => {
    it("reports no stop request by default", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      expect(await checkpointer.isStopRequested(threadId)).toBe(false);
      expect(await checkpointer.isStopRequested(newThreadId())).toBe(false);
    });

    it("requests, reports and clears a stop", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.requestStop(threadId);
      expect(await checkpointer.isStopRequested(threadId)).toBe(true);
      await checkpointer.clearStop(threadId);
      expect(await checkpointer.isStopRequested(threadId)).toBe(false);
    });

    it("treats a repeated request as one and a clear without request as a no-op", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.clearStop(threadId);
      expect(await checkpointer.isStopRequested(threadId)).toBe(false);
      await checkpointer.requestStop(threadId);
      await checkpointer.requestStop(threadId);
      await checkpointer.clearStop(threadId);
      expect(await checkpointer.isStopRequested(threadId)).toBe(false);
    });

    it("keeps stop requests per thread", async () => {
      const checkpointer = get();
      const stopped = await createThread(checkpointer);
      const other = await createThread(checkpointer);
      await checkpointer.requestStop(stopped);
      expect(await checkpointer.isStopRequested(other)).toBe(false);

      await checkpointer.requestStop(other);
      await checkpointer.clearStop(other);
      expect(await checkpointer.isStopRequested(stopped)).toBe(true);
      expect(await checkpointer.isStopRequested(other)).toBe(false);
    });
  });
}
