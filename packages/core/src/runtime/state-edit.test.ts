import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { interrupt } from "../node/interrupt.js";

interface State {
  messages: Message[];
  notes: string[];
}

/** ASK (interrupts for an answer) → END, with an appending reducer on `notes`. */
function graph() {
  const checkpointer = new InMemoryCheckpointer();
  const app = new StateGraph<State>({
    initialState: { notes: [] },
    reducers: { notes: (a, b) => [...a, ...b] },
  })
    .addNode("ASK", () => ({ notes: [String(interrupt("which order?"))] }))
    .addEdge("ASK", END)
    .setEntryPoint("ASK")
    .compile({ checkpointer });
  return { app, checkpointer };
}

describe("writeState", () => {
  it("creates a missing thread owned by userId, with the messages appended", async () => {
    const { app, checkpointer } = graph();
    const hello = Message.user("hello");
    const version = await app.writeState(
      { threadId: "t1", userId: "alice" },
      { values: { notes: ["a"] }, appendMessages: [hello] },
    );
    const stored = await checkpointer.getCheckpoint("t1");
    expect(stored).toMatchObject({ version, userId: "alice", status: "completed" });
    expect(stored!.values).toEqual({ notes: ["a"] });
    expect(await checkpointer.listMessages("t1")).toEqual([hello]);
  });

  it("replaces the fields without reducers and keeps where the run stands", async () => {
    const { app, checkpointer } = graph();
    await app.invoke({ messages: [Message.user("charge")] }, { threadId: "t2" });
    const paused = (await checkpointer.getCheckpoint("t2"))!;
    expect(paused.status).toBe("interrupted");
    await app.writeState({ threadId: "t2" }, { values: { notes: ["x"] } });
    const edited = (await checkpointer.getCheckpoint("t2"))!;
    expect(edited.values).toEqual({ notes: ["x"] });
    expect(edited).toMatchObject({
      userId: paused.userId,
      status: "interrupted",
      currentNode: paused.currentNode,
      interrupts: paused.interrupts,
    });
  });

  it("resetPosition clears the run position and keeps the transcript", async () => {
    const { app, checkpointer } = graph();
    await app.invoke({ messages: [Message.user("charge")] }, { threadId: "t3" });
    await app.writeState({ threadId: "t3" }, { values: {}, resetPosition: true });
    const reset = (await checkpointer.getCheckpoint("t3"))!;
    expect(reset).toMatchObject({ status: "completed", currentNode: null, interrupts: [] });
    expect(reset.values).toEqual({});
    expect(await checkpointer.listMessages("t3")).toHaveLength(1);
  });

  it("fromVersion writes the thread as it stood then, as a fork: later versions stay", async () => {
    const { app, checkpointer } = graph();
    await app.invoke({ messages: [Message.user("charge")] }, { threadId: "t6" });
    const before = (await checkpointer.getCheckpoint("t6"))!;
    await app.invoke({ resume: "order 5" }, { threadId: "t6" });
    const after = (await checkpointer.getCheckpoint("t6"))!;
    expect(after.values).toEqual({ notes: ["order 5"] });
    await app.updateState({ threadId: "t6" }, { messages: [Message.assistant("done")] });
    const version = await app.writeState({ threadId: "t6" }, { fromVersion: before.version });
    const forked = (await checkpointer.getCheckpoint("t6"))!;
    expect(forked).toMatchObject({
      version,
      parentVersion: before.version,
      status: "interrupted",
      currentNode: before.currentNode,
      interrupts: before.interrupts,
    });
    expect(forked.values).toEqual(before.values);
    expect((await checkpointer.listMessages("t6")).map((m) => Message.text(m))).toEqual(["charge"]);
    expect((await checkpointer.getVersion("t6", after.version))!.values).toEqual(after.values);
    await expect(app.writeState({ threadId: "t6" }, { fromVersion: 999 })).rejects.toMatchObject({
      code: "THREAD_005",
    });
    await expect(app.writeState({ threadId: "t6" }, { fromVersion: 0 })).rejects.toThrow(
      /fromVersion/,
    );
  });

  it("refuses a write computed from another version (STORAGE_CONFLICT_001)", async () => {
    const { app } = graph();
    await app.writeState({ threadId: "t4" }, { values: { notes: [] } });
    await expect(
      app.writeState({ threadId: "t4" }, { values: { notes: ["late"] }, expectedVersion: 0 }),
    ).rejects.toMatchObject({ code: "STORAGE_CONFLICT_001" });
  });

  it("refuses messages among the values and removals among the appended (INPUT_001)", async () => {
    const { app } = graph();
    await expect(
      app.writeState({ threadId: "t5" }, { values: { messages: [] } }),
    ).rejects.toMatchObject({ code: "INPUT_001" });
    await expect(
      app.writeState({ threadId: "t5" }, { appendMessages: [Message.remove("m1") as never] }),
    ).rejects.toMatchObject({ code: "INPUT_001" });
  });
});
