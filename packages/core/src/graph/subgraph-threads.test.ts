import { describe, expect, it } from "vitest";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { END } from "../definition/edges.js";
import { StateGraph } from "./state-graph.js";
import { childThreadId, isChildThreadId } from "./subgraph.js";

const quiet = { logger: recordingLogger() };

/** A graph whose one node writes `text`. */
function writer(text: string) {
  return new StateGraph()
    .addNode("WRITE", () => Message.assistant(text))
    .addEdge("WRITE", END)
    .setEntryPoint("WRITE")
    .compile(quiet);
}

/** A graph that runs `inner` as its subgraph node INNER, then writes. */
function withInner(inner: ReturnType<typeof writer>) {
  return new StateGraph()
    .addNode("INNER", inner)
    .addNode("WRITE", () => Message.assistant("from the worker"))
    .addEdge("INNER", "WRITE")
    .addEdge("WRITE", END)
    .setEntryPoint("INNER")
    .compile(quiet);
}

describe("a subgraph's threads", () => {
  it("are listed under their parent only, and deleted with it", async () => {
    const store = new InMemoryCheckpointer();
    const worker = withInner(writer("from the inner graph"));
    const app = new StateGraph()
      .addNode("WORKER", worker)
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ checkpointer: store, ...quiet });
    await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });
    const ids = async (filter?: { parentThreadId: string }) =>
      (await store.listThreads(filter)).map((thread) => thread.threadId);

    expect(await ids()).toEqual(["t"]);
    expect(await store.listThreads({ parentThreadId: "t" })).toMatchObject([
      { threadId: "t|WORKER@0", parentThreadId: "t", status: "completed" },
    ]);
    expect(await ids({ parentThreadId: "t|WORKER@0" })).toEqual(["t|WORKER@0|INNER@0"]);

    await app.deleteThread({ threadId: "t" });
    for (const threadId of ["t", "t|WORKER@0", "t|WORKER@0|INNER@0"]) {
      expect(await store.getCheckpoint(threadId), threadId).toBeNull();
      expect(await store.listMessages(threadId), threadId).toEqual([]);
    }
  });
});

describe("isChildThreadId", () => {
  it("knows the ids childThreadId gives, nested ones too, and no others", () => {
    const child = childThreadId("order-7", "WORKER", 0);
    expect(isChildThreadId(child)).toBe(true);
    expect(isChildThreadId(childThreadId(child, "INNER", 3))).toBe(true);
    expect(isChildThreadId("order-7")).toBe(false);
    expect(isChildThreadId("bob|notes@home")).toBe(false);
  });
});
