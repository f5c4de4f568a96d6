import { describe, expect, it } from "vitest";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { END } from "../definition/edges.js";
import { StateGraph } from "./state-graph.js";

/** A one-node graph, compiled with `options` besides a logger. */
function graph() {
  return new StateGraph()
    .addNode("ECHO", () => Message.assistant("hi"))
    .addEdge("ECHO", END)
    .setEntryPoint("ECHO");
}

/** An option JavaScript would have ignored: LangGraph.js names and typos (issue 27). */
describe("unknown options", () => {
  it.each([
    { option: { checkpointSaver: new InMemoryCheckpointer() }, says: "Use 'checkpointer'" },
    { option: { chekpointer: new InMemoryCheckpointer() }, says: "Known options: checkpointer," },
  ])("compile() refuses $option with OPTION_001", ({ option, says }) => {
    const name = Object.keys(option)[0]!;
    expect(() => graph().compile({ logger: recordingLogger(), ...option } as never)).toThrow(
      expect.objectContaining({
        code: "OPTION_001",
        option: name,
        message: expect.stringContaining(says),
      }),
    );
    expect(() => graph().compile(option as never)).toThrow(`compile(): unknown option '${name}'`);
  });

  it.each([
    {
      config: { configurable: { thread_id: "t" } },
      says: "Use 'threadId' (configurable.thread_id)",
    },
    { config: { thread_id: "t" }, says: "Use 'threadId'" },
    { config: { recursion_limit: 5 }, says: "Use 'recursionLimit'" },
    { config: { checkpoint_id: "1" }, says: "Use 'fromVersion'" },
    { config: { streamMode: "values" }, says: "'streamMode' is an option of stream()" },
    { config: { threadID: "t" }, says: "Known options: threadId, userId," },
  ])("invoke() refuses $config with OPTION_001, and writes nothing", async ({ config, says }) => {
    const store = new InMemoryCheckpointer();
    const app = graph().compile({ checkpointer: store, logger: recordingLogger() });
    const name = Object.keys(config)[0]!;

    await expect(
      app.invoke({ messages: [] }, { threadId: "t", ...config } as never),
    ).rejects.toMatchObject({
      code: "OPTION_001",
      option: name,
      message: expect.stringContaining(says),
    });
    expect(await store.getCheckpoint("t")).toBeNull();
  });

  it("stream() takes streamMode, and refuses what invoke() refuses", async () => {
    const app = graph().compile({ logger: recordingLogger() });
    const values = [];
    for await (const state of app.stream(
      { messages: [] },
      { threadId: "t", streamMode: "values" },
    )) {
      values.push(state);
    }
    expect(values.length).toBeGreaterThan(0);

    const refused = app.stream({ messages: [] }, { configurable: { thread_id: "u" } } as never);
    await expect(refused.next()).rejects.toMatchObject({
      code: "OPTION_001",
      message: expect.stringContaining("stream() config: unknown option 'configurable'"),
    });
  });
});
