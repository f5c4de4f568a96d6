import { describe, expect, it } from "vitest";
import { InMemoryCheckpointer } from "./in-memory-checkpointer.js";
import type { MessagePage, ThreadFilter } from "./base-checkpointer.js";

/** The in-memory store, counting what the base hands its engine methods. */
class ProbedCheckpointer extends InMemoryCheckpointer {
  opens = 0;
  shutdowns = 0;
  failNextOpen = false;
  pages: MessagePage[] = [];
  filters: ThreadFilter[] = [];

  protected override async open(): Promise<void> {
    this.opens += 1;
    if (this.failNextOpen) {
      this.failNextOpen = false;
      throw new Error("server not up yet");
    }
  }

  protected override async shutdown(): Promise<void> {
    this.shutdowns += 1;
  }

  protected override async loadMessages(threadId: string, page: MessagePage) {
    this.pages.push(page);
    return super.loadMessages(threadId, page);
  }

  protected override async loadThreads(filter: ThreadFilter) {
    this.filters.push(filter);
    return super.loadThreads(filter);
  }
}

describe("BaseCheckpointer", () => {
  it("opens once on first use, again after a failed open, and closes once", async () => {
    const store = new ProbedCheckpointer();
    store.failNextOpen = true;
    await expect(store.getCheckpoint("t1")).rejects.toMatchObject({
      code: "STORAGE_FAILURE_001",
      message: "Storage operation 'getCheckpoint' failed: server not up yet",
    });
    expect(await store.getCheckpoint("t1")).toBeNull();
    await store.setup();
    expect(store.opens).toBe(2);
    await Promise.all([store.close(), store.close()]);
    expect(store.shutdowns).toBe(1);
    await expect(store.listThreads()).rejects.toMatchObject({
      code: "STORAGE_FAILURE_001",
      message: "Storage operation 'listThreads' failed: checkpointer is closed",
    });
  });

  it("hands the engine whole-number pages, with null for no limit", async () => {
    const store = new ProbedCheckpointer();
    await store.listMessages("t1", { offset: 1.7, limit: 2.2 });
    await store.listMessages("t1", { offset: -3, limit: Infinity });
    await store.listMessages("t1", { offset: Infinity, limit: NaN });
    await store.listThreads({ userId: "u1" });
    expect(store.pages).toEqual([
      { offset: 1, limit: 2, version: null },
      { offset: 0, limit: null, version: null },
      { offset: Number.MAX_SAFE_INTEGER, limit: 0, version: null },
    ]);
    expect(store.filters).toEqual([{ userId: "u1", parentThreadId: null, offset: 0, limit: null }]);
  });
});
