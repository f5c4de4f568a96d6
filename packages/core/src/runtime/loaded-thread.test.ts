import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { invokeAsHost } from "../host/host-run.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { silentLogger } from "../events/logger.js";
import { sleep } from "../node/deadline.js";

/** Counts the reads a run starts with: of the checkpoint, of the stop count, or of both at once. */
class CountingCheckpointer extends InMemoryCheckpointer {
  reads = { checkpoint: 0, stops: 0, both: 0 };
  override async getCheckpoint(threadId: string) {
    this.reads.checkpoint++;
    return super.getCheckpoint(threadId);
  }
  override async countStopRequests(threadId: string) {
    this.reads.stops++;
    return super.countStopRequests(threadId);
  }
  override async getCheckpointAndStops(threadId: string) {
    this.reads.both++;
    return super.getCheckpointAndStops(threadId);
  }
  reset() {
    this.reads = { checkpoint: 0, stops: 0, both: 0 };
  }
}

function echoGraph(checkpointer: InMemoryCheckpointer) {
  return new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
}

const input = (text = "hi") => ({ messages: [Message.user(text)] });

describe("the host control loadedThread", () => {
  it("a run reads the thread and its stop count in one read, and none when the host read them", async () => {
    const store = new CountingCheckpointer();
    const graph = echoGraph(store);
    await graph.invoke(input(), { threadId: "t" });
    store.reset();
    await graph.invoke(input(), { threadId: "t" });
    expect(store.reads).toEqual({ checkpoint: 0, stops: 0, both: 1 });

    const read = await store.getCheckpointAndStops("t");
    store.reset();
    const r = await invokeAsHost(graph, input(), { threadId: "t" }, { loadedThread: read });
    expect(r.status).toBe("completed");
    expect(store.reads).toEqual({ checkpoint: 0, stops: 0, both: 0 });
    expect(r.state.messages).toHaveLength(6);
    expect(r).toMatchObject({ step: 3, currentNode: null });

    store.reset();
    const none = { checkpoint: null, stopRequests: 0 };
    await invokeAsHost(graph, input(), { threadId: "new" }, { loadedThread: none });
    expect(store.reads).toEqual({ checkpoint: 0, stops: 0, both: 0 });
  });

  it("a stop requested after the host's read stops the run; one before it does not", async () => {
    const store = new InMemoryCheckpointer();
    // A node slow enough for the run to poll for stop requests several times.
    const graph = new StateGraph()
      .addNode("MAIN", async () => {
        await sleep(100);
        return Message.assistant("ok");
      })
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ checkpointer: store, logger: silentLogger, stopPollIntervalMs: 5 });
    await store.requestStop("t");
    const read = await store.getCheckpointAndStops("t");
    expect(read).toEqual({ checkpoint: null, stopRequests: 1 });
    const first = await invokeAsHost(graph, input(), { threadId: "t" }, { loadedThread: read });
    expect(first.status).toBe("completed");

    const before = await store.getCheckpointAndStops("t");
    await store.requestStop("t");
    const second = await invokeAsHost(graph, input(), { threadId: "t" }, { loadedThread: before });
    expect(second.status).toBe("stopped");
    expect(await store.getCheckpoint("t")).toMatchObject({ status: "stopped" });
  });

  it("fails as stale when the thread moved since, and refuses another thread's read", async () => {
    const store = new InMemoryCheckpointer();
    const graph = echoGraph(store);
    await graph.invoke(input(), { threadId: "t" });
    const old = await store.getCheckpointAndStops("t");
    await graph.invoke(input("again"), { threadId: "t" });
    await expect(
      invokeAsHost(graph, input("late"), { threadId: "t" }, { loadedThread: old }),
    ).rejects.toMatchObject({ code: "STORAGE_CONFLICT_001" });
    await expect(
      invokeAsHost(graph, input("x"), { threadId: "u" }, { loadedThread: old }),
    ).rejects.toMatchObject({ code: "INPUT_001" });
    const negative = { checkpoint: null, stopRequests: -1 };
    await expect(
      invokeAsHost(graph, input("x"), { threadId: "u" }, { loadedThread: negative }),
    ).rejects.toMatchObject({ code: "INPUT_001", message: /loadedThread/ });
    const messages = await store.listMessages("t");
    expect(messages.map((m) => Message.text(m))).toEqual(["hi", "ok", "again", "ok"]);
  });
});
