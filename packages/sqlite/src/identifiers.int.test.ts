import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Message } from "@tenxgraph/core";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { newThreadWrite } from "./support/new-thread-write.js";

const folder = join(tmpdir(), `tenxgraph-sqlite-ids-${randomUUID()}`);
afterEach(() => rmSync(folder, { recursive: true, force: true }));

// SQLite keeps text as UTF-8, where a lone surrogate has no encoding: it would come back as
// U+FFFD, an id naming no thread and a key matching no call. Such ids are refused up front.
describe("SqliteCheckpointer identifiers", () => {
  const lone = "order-\ud800";

  it("refuses ids with a lone surrogate, naming the field, and writes nothing", async () => {
    const store = new SqliteCheckpointer({ path: join(folder, "threads.db") });
    const refused = (field: string) => ({
      code: "STORAGE_FAILURE_001",
      message: expect.stringContaining(`${field} "order-\\ud800" cannot be stored exactly`),
    });
    await expect(store.putCheckpoint(newThreadWrite(lone))).rejects.toMatchObject(
      refused("threadId"),
    );
    await expect(store.putCheckpoint(newThreadWrite("t", { userId: lone }))).rejects.toMatchObject(
      refused("userId"),
    );
    const message = { ...Message.user("hi"), id: lone };
    await expect(
      store.putCheckpoint(newThreadWrite("t", { newMessages: [message] })),
    ).rejects.toMatchObject(refused("messageId"));
    await expect(store.requestStop(lone)).rejects.toMatchObject(refused("threadId"));
    expect(await store.listThreads()).toEqual([]);

    await store.putCheckpoint(newThreadWrite("t"));
    const claim = {
      key: lone,
      toolName: "charge_card",
      ownerRunId: "r",
      leaseMs: 3000,
      expectedAttempt: 0,
    };
    await expect(store.claimCalls("t", [claim])).rejects.toMatchObject(refused("key"));
    expect(await store.listCalls("t")).toEqual([]);
    await store.close();
  });

  it("keeps well-formed ids of any script exactly, astral characters included", async () => {
    const store = new SqliteCheckpointer({ path: join(folder, "threads.db") });
    const threadId = "заказ-4821-😀-注文";
    await store.putCheckpoint(newThreadWrite(threadId, { userId: "ユーザー" }));
    const claim = {
      key: "ключ-😀",
      toolName: "charge_card",
      ownerRunId: "r",
      leaseMs: 3000,
      expectedAttempt: 0,
    };
    await store.claimCalls(threadId, [claim]);
    expect(await store.listThreads()).toMatchObject([{ threadId, userId: "ユーザー" }]);
    expect(await store.getCalls(threadId, ["ключ-😀"])).toMatchObject([{ key: "ключ-😀" }]);
    await store.close();
  });
});
