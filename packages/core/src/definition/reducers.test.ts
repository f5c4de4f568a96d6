import { describe, expect, it } from "vitest";
import { Message } from "../messages/message.js";
import type { NodeFunction } from "./graph-node.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { END } from "./edges.js";
import { appendMessages, applyUpdate, type BaseState, type Reducers } from "./reducers.js";
import { StateGraph } from "../graph/state-graph.js";

interface CartState extends BaseState {
  total: number;
  items: string[];
  note?: string;
}

const sum = (current: number, update: number) => current + update;
const concat = (current: string[], update: string[]) => [...current, ...update];
const reducers: Reducers<CartState> = { total: sum, items: concat };

/** One node, then END, on a cart state with reducers on `total` and `items`. */
function oneNode(node: NodeFunction<CartState>, options: { reducers?: Reducers<CartState> } = {}) {
  return new StateGraph<CartState>({
    reducers: options.reducers,
    initialState: { total: 0, items: [] },
  })
    .addNode("A", node)
    .addEdge("A", END)
    .setEntryPoint("A")
    .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
}

describe("appendMessages", () => {
  it("appends new messages in order", () => {
    const [a, b, c] = [Message.user("a"), Message.assistant("b"), Message.user("c")];
    expect(appendMessages([a], [b, c])).toEqual([a, b, c]);
  });

  it("skips messages sent again unchanged, and never duplicates an id", () => {
    const a = Message.user("a");
    const b = Message.assistant("b");
    const result = appendMessages([a], [{ ...a }, b, b, JSON.parse(JSON.stringify(b))]);
    expect(result).toEqual([a, b]);
    expect(result[0]).toBe(a);
  });

  it("replaces a message sent again with other content, in its place (an edit)", () => {
    const [a, b, c] = [Message.user("a"), Message.assistant("b"), Message.user("c")];
    const edited = { ...b, content: "b, edited" } as Message;
    expect(appendMessages([a, b, c], [edited])).toEqual([a, edited, c]);
    // A later message of the same update with the same id edits the one just appended.
    const twice = appendMessages([a], [b, { ...b, content: "b again" } as Message]);
    expect(twice.map((m) => m.content)).toEqual(["a", "b again"]);
  });

  it("removes by id, or all, in update order", () => {
    const [a, b, c] = [Message.user("a"), Message.assistant("b"), Message.user("c")];
    expect(appendMessages([a, b, c], [Message.remove(b.id)])).toEqual([a, c]);
    const d = Message.user("d");
    expect(appendMessages([a, b], [Message.removeAll(), d])).toEqual([d]);
    // Removed, then sent again: appended at the end.
    expect(appendMessages([a, b], [Message.remove(a.id), a])).toEqual([b, a]);
    expect(() => appendMessages([a], [Message.remove("nope")])).toThrow(
      "Message.remove('nope'): the transcript has no message with this id",
    );
    expect(() => Message.remove("")).toThrow(TypeError);
    expect(Message.isRemoval(Message.remove(a.id))).toBe(true);
    expect(Message.isRemoval(a)).toBe(false);
  });

  it("does not change the array it was given", () => {
    const current = [Message.user("a")];
    const result = appendMessages(current, [Message.user("b")]);
    expect(current).toHaveLength(1);
    expect(result).toHaveLength(2);
    expect(appendMessages(current, [])).toBe(current);
  });
});

describe("applyUpdate", () => {
  it("appends messages, replaces fields without a reducer, reduces fields with one", () => {
    const first = Message.user("a");
    const state: CartState = { messages: [first], total: 2, items: ["x"], note: "old" };
    const added = Message.assistant("b");
    applyUpdate(state, { messages: [first, added], total: 3, items: ["y"], note: "new" }, reducers);
    expect(state).toEqual({ messages: [first, added], total: 5, items: ["x", "y"], note: "new" });
  });

  it("leaves fields absent from the update alone", () => {
    const state: CartState = { messages: [], total: 1, items: ["x"], note: "kept" };
    applyUpdate(state, { total: 4 }, {});
    expect(state).toEqual({ messages: [], total: 4, items: ["x"], note: "kept" });
  });
});

describe("state updates through a run", () => {
  it("messages in an update are appended to the transcript", async () => {
    const reply = Message.assistant("hello");
    const app = oneNode(() => ({ messages: [reply] }));
    const question = Message.user("hi");
    const result = await app.invoke({ messages: [question] }, { threadId: "t" });
    expect(result.state.messages.map((m) => m.id)).toEqual([question.id, reply.id]);
  });

  it("a message returned again (same id) is not duplicated", async () => {
    const app = oneNode((state) => ({ messages: [...state.messages, Message.assistant("ok")] }));
    const result = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    expect(result.state.messages.map((m) => m.content)).toEqual(["hi", "ok"]);
    const stored = await app.getState({ threadId: "t" });
    expect(stored?.values.messages.map((m) => m.content)).toEqual(["hi", "ok"]);
  });

  it("a message the node pushed into the transcript and also returns is kept once", async () => {
    const app = oneNode((state) => {
      const reply = Message.assistant("hi");
      state.messages.push(reply);
      return [reply];
    });
    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(result.state.messages.map((m) => m.content)).toEqual(["go", "hi"]);
    const stored = await app.getState({ threadId: "t" });
    expect(stored?.values.messages.map((m) => m.content)).toEqual(["go", "hi"]);
  });

  it("fields without a reducer are replaced", async () => {
    const app = oneNode(() => ({ total: 7, items: ["only"], note: "set" }));
    const result = await app.invoke({ total: 100, items: ["input"] }, { threadId: "t" });
    expect(result.state).toMatchObject({ total: 7, items: ["only"], note: "set" });
  });

  it("declared reducers combine the input and each node's update with the stored value", async () => {
    const app = oneNode(() => ({ total: 2, items: ["from node"] }), { reducers });
    const first = await app.invoke({ total: 5, items: ["from input"] }, { threadId: "t" });
    expect(first.state).toMatchObject({ total: 7, items: ["from input", "from node"] });

    const second = await app.invoke({ total: 1 }, { threadId: "t" });
    expect(second.state).toMatchObject({
      total: 10,
      items: ["from input", "from node", "from node"],
    });
    const stored = await app.getState({ threadId: "t" });
    expect(stored?.values).toMatchObject({ total: 10 });
  });

  it("a new turn's input messages are appended to the existing transcript", async () => {
    const app = oneNode(() => Message.assistant("ack"));
    await app.invoke({ messages: [Message.user("one")] }, { threadId: "t" });
    const result = await app.invoke({ messages: [Message.user("two")] }, { threadId: "t" });
    expect(result.state.messages.map((m) => m.content)).toEqual(["one", "ack", "two", "ack"]);
  });
});

describe("node output forms", () => {
  it("a partial update", async () => {
    const app = oneNode(() => ({ note: "n", messages: [Message.assistant("m")] }));
    const result = await app.invoke({}, { threadId: "t" });
    expect(result.state.note).toBe("n");
    expect(result.state.messages.map((m) => m.content)).toEqual(["m"]);
  });

  it("a single Message is appended", async () => {
    const reply = Message.assistant("single");
    const app = oneNode(() => reply);
    const result = await app.invoke({ messages: [Message.user("q")] }, { threadId: "t" });
    expect(result.state.messages.at(-1)).toEqual(reply);
    expect(result.state.messages).toHaveLength(2);
  });

  it("a Message[] is appended in order", async () => {
    const replies = [Message.assistant("one"), Message.assistant("two")];
    const app = oneNode(async () => replies);
    const result = await app.invoke({}, { threadId: "t" });
    expect(result.state.messages).toEqual(replies);
  });

  it("void leaves the state as it was", async () => {
    const app = oneNode(() => undefined);
    const result = await app.invoke({ total: 3, messages: [Message.user("q")] }, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(result.state).toMatchObject({ total: 3, items: [] });
    expect(result.state.messages.map((m) => m.content)).toEqual(["q"]);
  });

  it("an empty array is an empty list of messages", async () => {
    const app = oneNode(() => []);
    const result = await app.invoke({ messages: [Message.user("q")] }, { threadId: "t" });
    expect(result.state.messages).toHaveLength(1);
  });

  it("a node that fails leaves no trace of what it did to its copy of the state", async () => {
    const seen: unknown[] = [];
    const app = oneNode((state) => {
      seen.push({ total: state.total, items: [...state.items], count: state.messages.length });
      if (seen.length > 1) return { note: "second attempt" };
      state.total = 999;
      state.items.push("sneaky");
      state.messages.push(Message.assistant("sneaky"));
      throw new Error("node failed after mutating its state");
    });
    const input = { total: 1, items: ["a"], messages: [Message.user("q")] };
    await expect(app.invoke(input, { threadId: "t" })).rejects.toThrow(/mutating/);
    const failed = await app.getState({ threadId: "t" });
    expect(failed?.values).toMatchObject({ total: 1, items: ["a"] });
    expect(failed?.values.messages.map((m) => m.content)).toEqual(["q"]);

    // Run again, the node gets the state as it was before the failed attempt.
    const result = await app.invoke(null, { threadId: "t" });
    expect(seen).toEqual([
      { total: 1, items: ["a"], count: 1 },
      { total: 1, items: ["a"], count: 1 },
    ]);
    expect(result.state).toMatchObject({ total: 1, items: ["a"], note: "second attempt" });
    expect(result.state.messages.map((m) => m.content)).toEqual(["q"]);
  });

  it("anything else fails the run with a clear error", async () => {
    const text = oneNode((() => "just text") as never);
    await expect(text.invoke({}, { threadId: "t" })).rejects.toThrow(/returned string/);
    expect(await text.getState({ threadId: "t" })).toMatchObject({ status: "failed" });

    const mixed = oneNode((() => [Message.assistant("ok"), { not: "a message" }]) as never);
    await expect(mixed.invoke({}, { threadId: "t" })).rejects.toThrow(/invalid message \[1\]/);
  });
});
