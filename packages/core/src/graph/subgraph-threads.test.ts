import { describe, expect, it } from "vitest";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { END } from "./edges.js";
import { StateGraph } from "./state-graph.js";

/** A graph of one node that writes `text`; `inner` runs as a subgraph before it when given. */
function writer(text: string, inner?: ReturnType<typeof writer>) {
  const graph = new StateGraph().addNode("WRITE", () => Message.assistant(text));
  const quiet = { logger: recordingLogger() };
  if (!inner) return graph.addEdge("WRITE", END).setEntryPoint("WRITE").compile(quiet);
  return graph
    .addNode("INNER", inner)
    .addEdge("INNER", "WRITE")
    .addEdge("WRITE", END)
    .setEntryPoint("INNER")
    .compile(quiet);
}

describe("a subgraph's threads", () => {
  it("are listed under their parent only, and deleted with it", async () => {
    const store = new InMemoryCheckpointer();
    const worker = writer("from the worker", writer("from the inner graph"));
    const app = new StateGraph()
      .addNode("WORKER", worker)
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ checkpointer: store, logger: recordingLogger() });
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
