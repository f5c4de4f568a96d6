import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { invokeAsHost } from "../host/host-run.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { silentLogger } from "../events/logger.js";

/** Counts checkpoint reads, to show a run given the checkpoint does not read it again. */
class CountingCheckpointer extends InMemoryCheckpointer {
  reads = 0;
  override async getCheckpoint(threadId: string) {
    this.reads++;
    return super.getCheckpoint(threadId);
  }
}

function echoGraph(checkpointer: InMemoryCheckpointer) {
  return new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
}

describe("the host control loadedCheckpoint", () => {
  it("starts from the caller's checkpoint instead of reading it again", async () => {
    const store = new CountingCheckpointer();
    const graph = echoGraph(store);
    const input = () => ({ messages: [Message.user("hi")] });
    await graph.invoke(input(), { threadId: "t" });
    store.reads = 0;
    await graph.invoke(input(), { threadId: "t" });
    const plain = store.reads;

    const checkpoint = await store.getCheckpoint("t");
    store.reads = 0;
    const r = await invokeAsHost(
      graph,
      input(),
      { threadId: "t" },
      { loadedCheckpoint: checkpoint },
    );
    expect(r.status).toBe("completed");
    expect(store.reads).toBe(plain - 1);
    expect(r.state.messages).toHaveLength(6);
    expect(r).toMatchObject({ step: 3, currentNode: null });

    store.reads = 0;
    await invokeAsHost(graph, input(), { threadId: "new" }, { loadedCheckpoint: null });
    expect(store.reads).toBe(plain - 1);
  });

  it("fails as stale when the thread moved since, and refuses another thread's checkpoint", async () => {
    const store = new InMemoryCheckpointer();
    const graph = echoGraph(store);
    await graph.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    const old = await store.getCheckpoint("t");
    await graph.invoke({ messages: [Message.user("again")] }, { threadId: "t" });
    await expect(
      invokeAsHost(
        graph,
        { messages: [Message.user("late")] },
        { threadId: "t" },
        { loadedCheckpoint: old },
      ),
    ).rejects.toMatchObject({ code: "STORAGE_CONFLICT_001" });
    await expect(
      invokeAsHost(
        graph,
        { messages: [Message.user("x")] },
        { threadId: "u" },
        { loadedCheckpoint: old },
      ),
    ).rejects.toMatchObject({ code: "INPUT_001" });
    const messages = await store.listMessages("t");
    expect(messages.map((m) => Message.text(m))).toEqual(["hi", "ok", "again", "ok"]);
  });
});
