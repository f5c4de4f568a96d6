import * as vitest from "vitest";
import { describe, expect, it } from "vitest";
import { Message } from "../messages/message.js";
import { checkpointerConformance } from "../testing/conformance/index.js";
import { InMemoryCheckpointer } from "./in-memory-checkpointer.js";
import type { CheckpointWrite } from "./checkpointer.js";

checkpointerConformance(
  {
    name: "InMemoryCheckpointer",
    create: async () => new InMemoryCheckpointer(),
    createWith: async (options) => new InMemoryCheckpointer(options),
    destroy: (checkpointer) => checkpointer.close(),
  },
  vitest,
);

function firstWrite(threadId: string, overrides: Partial<CheckpointWrite> = {}): CheckpointWrite {
  return {
    threadId,
    incarnation: "first-life",
    userId: null,
    expectedVersion: 0,
    step: 0,
    currentNode: "MAIN",
    status: "running",
    values: { order: { id: "4821" } },
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
    ...overrides,
  };
}

describe("InMemoryCheckpointer", () => {
  it("keeps its own copies of written and returned checkpoints", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const write = firstWrite("t1");
    await checkpointer.putCheckpoint(write);
    (write.values.order as { id: string }).id = "mutated after write";

    const read = await checkpointer.getCheckpoint("t1");
    expect(read?.values).toEqual({ order: { id: "4821" } });
    (read!.values.order as { id: string }).id = "mutated after read";
    read!.interrupts.push({ id: "x", value: null, node: "MAIN" });
    expect(await checkpointer.getCheckpoint("t1")).toMatchObject({
      values: { order: { id: "4821" } },
      interrupts: [],
    });
  });

  it("keeps its own copies of messages and ledger results", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const message = Message.assistant("", [{ id: "call_1", name: "lookup", arguments: "{}" }]);
    await checkpointer.putCheckpoint(firstWrite("t1", { newMessages: [message] }));
    message.content = "mutated after write";

    const [read] = await checkpointer.listMessages("t1");
    read!.content = "mutated after read";
    if (read!.role === "assistant") read!.toolCalls![0]!.name = "mutated";
    const [again] = await checkpointer.listMessages("t1");
    expect(again).toEqual({ ...message, content: "" });
    expect(again?.role === "assistant" && again.toolCalls?.[0]?.name).toBe("lookup");

    const result = { __kind__: "raw", value: { items: [1] } };
    await checkpointer.claimCalls("t1", [
      { key: "k", toolName: "lookup", ownerRunId: "r", leaseMs: 3000, expectedAttempt: 0 },
    ]);
    await checkpointer.completeCall("t1", { key: "k", attempt: 1 }, result);
    result.value.items.push(2);
    const [entry] = await checkpointer.listCalls("t1");
    expect(entry?.status === "completed" && entry.result).toEqual({
      __kind__: "raw",
      value: { items: [1] },
    });
  });

  it("names the repeated message id and the closed method in its errors", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const message = Message.user("hi");
    await checkpointer.putCheckpoint(firstWrite("t1", { newMessages: [message] }));
    await expect(
      checkpointer.putCheckpoint(firstWrite("t1", { expectedVersion: 1, newMessages: [message] })),
    ).rejects.toThrow(message.id);

    await checkpointer.close();
    await expect(checkpointer.listThreads()).rejects.toMatchObject({
      code: "STORAGE_FAILURE_001",
      operation: "listThreads",
    });
  });

  it("orders threads relisted in the same millisecond by write order", async () => {
    const frozen = new Date("2026-08-01T00:00:00.000Z");
    const checkpointer = new InMemoryCheckpointer({ clock: () => frozen });
    for (const id of ["t1", "t2", "t3"]) await checkpointer.putCheckpoint(firstWrite(id));
    await checkpointer.putCheckpoint(firstWrite("t1", { expectedVersion: 1, status: "completed" }));
    const listed = await checkpointer.listThreads();
    expect(listed.map((t) => t.threadId)).toEqual(["t1", "t3", "t2"]);
    expect(listed[0]?.updatedAt).toBe(frozen.toISOString());
  });
});
