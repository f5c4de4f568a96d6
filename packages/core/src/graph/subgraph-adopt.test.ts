import { describe, expect, it } from "vitest";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { END } from "../definition/edges.js";
import { StateGraph } from "./state-graph.js";

const quiet = { logger: recordingLogger() };

/** A parent whose WORKER subgraph answers "worked"; `ran` counts the worker's turns. */
function parentGraph(store: InMemoryCheckpointer, ran: { count: number }) {
  const worker = new StateGraph()
    .addNode("WORK", () => {
      ran.count += 1;
      return Message.assistant("worked");
    })
    .addEdge("WORK", END)
    .setEntryPoint("WORK")
    .compile(quiet);
  return new StateGraph()
    .addNode("WORKER", worker)
    .addEdge("WORKER", END)
    .setEntryPoint("WORKER")
    .compile({ checkpointer: store, ...quiet });
}

/** Writes a finished thread at `threadId` as `userId`, listed under `parentThreadId`. */
async function plant(
  store: InMemoryCheckpointer,
  threadId: string,
  userId: string | null,
  parentThreadId: string | null,
) {
  await store.putCheckpoint({
    threadId,
    incarnation: "planted",
    userId,
    step: 1,
    currentNode: null,
    status: "completed",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    expectedVersion: 0,
    parentThreadId,
    newMessages: [Message.assistant("squatted")],
  });
}

describe("a subgraph opening its child thread", () => {
  it.each([
    ["another user's top-level thread", "bob", null],
    ["another user's thread claiming the parent", "bob", "t"],
    ["the same user's top-level thread", "alice", null],
    ["a thread listed under another parent", "alice", "other"],
  ])("refuses %s with THREAD_006 and writes nothing to it", async (_, owner, parent) => {
    const store = new InMemoryCheckpointer();
    await plant(store, "t|WORKER@0", owner, parent);
    const before = await store.getCheckpoint("t|WORKER@0");
    const ran = { count: 0 };
    const error = await parentGraph(store, ran)
      .invoke({ messages: [Message.user("go")] }, { threadId: "t", userId: "alice" })
      .catch((e: unknown) => e);
    expect(isTenxgraphError(error) && error.code).toBe("THREAD_006");
    expect(ran.count).toBe(0);
    expect(await store.getCheckpoint("t|WORKER@0")).toEqual(before);
    expect((await store.listMessages("t")).map((m) => Message.text(m))).not.toContain("squatted");
  });

  it("adopts its own child: a turn run again reads the child's completed turn", async () => {
    const store = new InMemoryCheckpointer();
    const ran = { count: 0 };
    const app = parentGraph(store, ran);
    const result = await app.invoke(
      { messages: [Message.user("go")] },
      { threadId: "t", userId: "alice" },
    );
    expect(result.status).toBe("completed");
    expect(ran.count).toBe(1);
  });
});
