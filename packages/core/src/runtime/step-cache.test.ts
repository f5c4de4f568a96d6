import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import type { CheckpointWrite } from "../storage/checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import { RecordingCheckpointer, recordingLogger } from "../support/helpers.js";
import { FAULT_POINTS } from "../node/fault-points.js";

interface TraceState extends BaseState {
  trace: string[];
}

/**
 * The in-memory store with a step cache, as `PgCheckpointer` has with Redis: `cacheStep` keeps
 * the last step per thread; `available = false` makes it refuse, as Redis does when down.
 */
class CachingCheckpointer extends RecordingCheckpointer {
  readonly cached = new Map<string, CheckpointWrite>();
  available = true;

  async cacheStep(write: CheckpointWrite): Promise<boolean> {
    if (!this.available) return false;
    this.cached.set(write.threadId, structuredClone(write));
    return true;
  }

  async getCachedStep(threadId: string): Promise<CheckpointWrite | null> {
    return this.cached.get(threadId) ?? null;
  }
}

/** A → B → C → END, each node appending its name to `trace` and one message. */
function abc(store: CachingCheckpointer, faultPoints?: FaultPoints) {
  const graph = new StateGraph<TraceState>({ initialState: { trace: [] } });
  for (const [name, next] of [
    ["A", "B"],
    ["B", "C"],
    ["C", END],
  ] as const) {
    graph
      .addNode(name, (state) => ({
        trace: [...state.trace, name],
        messages: [Message.assistant(name)],
      }))
      .addEdge(name, next);
  }
  return graph
    .setEntryPoint("A")
    .compile({ checkpointer: store, logger: recordingLogger(), faultPoints });
}

const written = (store: CachingCheckpointer) =>
  store.writes.map((w) => [w.currentNode, w.status, w.newMessages.map((m) => m.content)]);

describe("durableCheckpointEveryStep: false with a store that caches steps", () => {
  it("caches the steps between the terminal points and writes only those durably", async () => {
    const store = new CachingCheckpointer();
    const result = await abc(store).invoke(
      { messages: [Message.user("q")] },
      { threadId: "t", durableCheckpointEveryStep: false },
    );
    expect(result.status).toBe("completed");
    // The start is written twice on a new thread: before and after its run lease is claimed.
    expect(written(store)).toEqual([
      ["A", "running", ["q"]],
      ["A", "running", []],
      [null, "completed", ["A", "B", "C"]],
    ]);
    // The last cached step carries every message the durable transcript lacked then.
    const last = store.cached.get("t")!;
    expect([
      last.expectedVersion,
      last.currentNode,
      last.newMessages.map((m) => m.content),
    ]).toEqual([2, "C", ["A", "B"]]);
  });

  it("resumes a crashed run from its cached step, and the next durable write carries the rest", async () => {
    const store = new CachingCheckpointer();
    // Every durable write after the start fails, the failure record included: as if the
    // process died after C ran, the durable store knows only the start.
    const faults = new FaultPoints().arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      () => {
        throw new Error("crash");
      },
      { when: (at) => at.node !== "A" },
    );
    await expect(
      abc(store, faults).invoke({}, { threadId: "t", durableCheckpointEveryStep: false }),
    ).rejects.toThrow();
    const before = await abc(store).getState({ threadId: "t" });
    expect(before?.values.trace).toEqual(["A", "B"]);
    expect(before?.currentNode).toBe("C");

    const result = await abc(store).invoke(null, { threadId: "t" });
    expect(result.state.trace).toEqual(["A", "B", "C"]);
    expect(result.state.messages.map((m) => m.content)).toEqual(["A", "B", "C"]);
    // The continuation's start write made the cached messages durable, in order.
    expect(written(store).slice(-2)).toEqual([
      ["C", "running", ["A", "B"]],
      [null, "completed", ["C"]],
    ]);
    const durable = await store.listMessages("t");
    expect(durable.map((m) => m.content)).toEqual(["A", "B", "C"]);
  });

  it("ignores a cached step that a later durable write superseded", async () => {
    const store = new CachingCheckpointer();
    await abc(store).invoke({}, { threadId: "t", durableCheckpointEveryStep: false });
    // A stale entry for an older version, as a cache might still hold after a failed update.
    store.cached.set("t", { ...store.cached.get("t")!, expectedVersion: 1, currentNode: "B" });
    const state = await abc(store).getState({ threadId: "t" });
    expect([state?.currentNode, state?.status, state?.values.trace]).toEqual([
      null,
      "completed",
      ["A", "B", "C"],
    ]);
  });

  it("writes a step durably when the cache refuses it, so nothing is lost", async () => {
    const store = new CachingCheckpointer();
    store.available = false;
    await abc(store).invoke({}, { threadId: "t", durableCheckpointEveryStep: false });
    expect(written(store).map(([node, status]) => [node, status])).toEqual([
      ["A", "running"],
      ["A", "running"], // the start again, once the new thread's run lease is held
      ["B", "running"],
      ["C", "running"],
      [null, "completed"],
    ]);
  });
});
