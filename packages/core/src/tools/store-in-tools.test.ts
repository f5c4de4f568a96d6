import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { InMemoryStore } from "../store/in-memory-store.js";
import { FaultPoints } from "../testing/fault-points.js";
import { callsTurn, recordingLogger, supportAgent, withoutStepWrites } from "../support/helpers.js";
import { tool } from "./tool.js";

const user = (text: string) => ({ messages: [Message.user(text)] });

/** A tool that counts its runs in the store, under the user's namespace. */
function counter() {
  return tool({
    name: "remember",
    description: "Remembers a fact.",
    schema: z.object({ fact: z.string() }),
    async execute(args, ctx) {
      const ns = [ctx.userId ?? "anonymous", "facts"];
      const before = await ctx.store.get(ns, "count");
      const count = ((before?.value.count as number | undefined) ?? 0) + 1;
      await ctx.store.put(ns, "count", { count, last: args.fact });
      return `remembered (${count})`;
    },
  });
}

describe("the store in nodes and tools", () => {
  it("gives nodes and tools the compiled store, shared across threads", async () => {
    const store = new InMemoryStore();
    const app = new StateGraph()
      .addNode("MAIN", async (state, ctx) => {
        const seen = await ctx.store.get(["shared"], "visits");
        const visits = ((seen?.value.n as number | undefined) ?? 0) + 1;
        await ctx.store.put(["shared"], "visits", { n: visits, thread: ctx.threadId });
        return Message.assistant(`visit ${visits}`);
      })
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ store, logger: recordingLogger() });
    expect(app.store).toBe(store);
    await app.invoke(user("hi"), { threadId: "t-1" });
    const result = await app.invoke(user("hi"), { threadId: "t-2" });
    expect(Message.text(result.state.messages.at(-1)!)).toBe("visit 2");
    expect((await store.get(["shared"], "visits"))!.value).toEqual({ n: 2, thread: "t-2" });

    const agent = supportAgent({
      model: [callsTurn("m-1", [["remember", { fact: "likes tea" }]]), "ok"],
      tools: [counter()],
      store,
    });
    await agent.invoke(user("remember"), { threadId: "t-3", userId: "alice" });
    expect((await store.get(["alice", "facts"], "count"))!.value).toEqual({
      count: 1,
      last: "likes tea",
    });
  });

  it("fails a node touching ctx.store without a store with STORE_001, naming the fix", async () => {
    const app = new StateGraph()
      .addNode("MAIN", async (_state, ctx) => {
        await ctx.store.get(["x"], "y");
        return Message.assistant("unreachable");
      })
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ logger: recordingLogger() });
    expect(app.store).toBe(undefined);
    await expect(app.invoke(user("hi"), { threadId: "t-none" })).rejects.toMatchObject({
      code: "STORE_001",
      message: expect.stringContaining("compile({ checkpointer, store: new InMemoryStore() })"),
    });
  });

  it("makes a tool's ctx.store fail without a store: the call's error names the fix", async () => {
    const agent = supportAgent({
      model: [callsTurn("m-1", [["remember", { fact: "x" }]]), "ok"],
      tools: [counter()],
    });
    const result = await agent.invoke(user("remember"), { threadId: "t-tool-none" });
    const toolMessage = result.state.messages.find((m: Message) => m.role === "tool")!;
    // A tool's failure is a message the model reads, coded as the tool's (TOOL_ERROR_001).
    expect(Message.text(toolMessage)).toContain(
      "[TOOL_ERROR_001] ctx.store.get(): this graph has no store",
    );
    expect(Message.text(toolMessage)).toContain(
      "compile({ checkpointer, store: new InMemoryStore() })",
    );
  });

  it("refuses a store that is not one", () => {
    const graph = new StateGraph()
      .addNode("MAIN", () => Message.assistant("hi"))
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN");
    expect(() => graph.compile({ store: {} as never })).toThrow("store must be a Store");
  });

  it("does not repeat a tool's store write when its recorded call is replayed", async () => {
    const store = new InMemoryStore();
    const crash = new FaultPoints().arm(
      "ledger.after_record",
      () => {
        throw new Error("crashed after the record");
      },
      { times: 1 },
    );
    const agent = supportAgent({
      model: [callsTurn("m-1", [["remember", { fact: "tea" }]]), "ok"],
      tools: [counter()],
      store,
      faultPoints: crash,
      checkpointer: withoutStepWrites(new InMemoryCheckpointer()),
    });
    await expect(agent.invoke(user("go"), { threadId: "t-replay", userId: "bo" })).rejects.toThrow(
      "crashed after the record",
    );
    expect((await store.get(["bo", "facts"], "count"))!.value.count).toBe(1);
    const result = await agent.invoke(null, { threadId: "t-replay", userId: "bo" });
    expect(Message.text(result.state.messages.find((m: Message) => m.role === "tool")!)).toBe(
      "remembered (1)",
    );
    expect((await store.get(["bo", "facts"], "count"))!.value.count).toBe(1);
  });
});
