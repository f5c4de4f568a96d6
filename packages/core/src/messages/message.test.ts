import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { uuidv7 } from "./ids.js";
import { Message, isPlainMessage, messageSchema, type ContentBlock } from "./message.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit millisecond timestamp at the front of a UUIDv7. */
function uuidv7Millis(id: string): number {
  return parseInt(id.replace(/-/g, "").slice(0, 12), 16);
}

describe("uuidv7", () => {
  it("carries its creation time in the first 48 bits", () => {
    const before = Date.now();
    const id = uuidv7();
    const after = Date.now();
    // First in this file: no burst of ids has made the per-millisecond counter borrow ahead yet.
    expect(uuidv7Millis(id)).toBeGreaterThanOrEqual(before);
    expect(uuidv7Millis(id)).toBeLessThanOrEqual(after);
  });

  it("produces RFC 9562 version-7, variant-10 ids", () => {
    for (let i = 0; i < 200; i += 1) expect(uuidv7()).toMatch(UUID_V7);
  });

  it("never repeats, even many times within one millisecond", () => {
    const ids = Array.from({ length: 10_000 }, () => uuidv7());
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("ends in random bits: no two of many ids share their last 62", () => {
    const tails = Array.from({ length: 10_000 }, () => uuidv7().slice(20));
    expect(new Set(tails).size).toBe(tails.length);
    // The variant's two bits are fixed; the other two of its digit vary.
    const variants = new Set(Array.from({ length: 1_000 }, () => uuidv7()[19]));
    expect([...variants].sort()).toEqual(["8", "9", "a", "b"]);
  });

  it("sorts in creation order", () => {
    const ids = Array.from({ length: 10_000 }, () => uuidv7());
    expect([...ids].sort()).toEqual(ids);
  });
});

describe("Message.parse and versioning", () => {
  it("keeps fields it does not know, so message JSON survives a newer writer", () => {
    const stored = { ...Message.assistant("hi"), providerMetadata: { model: "x", cached: true } };
    const parsed = Message.parse(JSON.stringify(stored)) as typeof stored;
    expect(parsed.providerMetadata).toEqual({ model: "x", cached: true });
    expect(parsed).toEqual(stored);
  });
});

describe("Message factories", () => {
  it("give every message a fresh UUIDv7 id and an ISO creation time", () => {
    const messages = [
      Message.system("s"),
      Message.user("u"),
      Message.assistant("a"),
      Message.tool("call_1", "t"),
    ];
    for (const message of messages) {
      expect(message.id).toMatch(UUID_V7);
      expect(new Date(message.createdAt).toISOString()).toBe(message.createdAt);
    }
    expect(new Set(messages.map((m) => m.id)).size).toBe(4);
    // Created one after another, so their ids are in order.
    expect(messages.map((m) => m.id)).toEqual([...messages.map((m) => m.id)].sort());
  });

  it("system and user", () => {
    expect(Message.system("be brief")).toMatchObject({ role: "system", content: "be brief" });
    expect(Message.user("hi")).toMatchObject({ role: "user", content: "hi" });
    expect(Object.keys(Message.user("hi")).sort()).toEqual(["content", "createdAt", "id", "role"]);
  });

  it("assistant with and without tool calls and usage", () => {
    const calls = [{ id: "call_1", name: "lookup", arguments: '{"q":"x"}' }];
    const withCalls = Message.assistant("", calls, { usage: { inputTokens: 3, outputTokens: 4 } });
    expect(withCalls).toMatchObject({
      role: "assistant",
      content: "",
      toolCalls: calls,
      usage: { inputTokens: 3, outputTokens: 4 },
    });
    // No empty toolCalls array and no undefined keys: the JSON stays minimal.
    const plain = Message.assistant("done", []);
    expect("toolCalls" in plain).toBe(false);
    expect("usage" in plain).toBe(false);
  });

  it("tool, with isError only when it is an error", () => {
    const ok = Message.tool("call_1", "42");
    expect(ok).toMatchObject({ role: "tool", toolCallId: "call_1", content: "42" });
    expect("isError" in ok).toBe(false);
    expect("isError" in Message.tool("call_1", "x", { isError: false })).toBe(false);
    expect(Message.tool("call_1", "boom", { isError: true }).isError).toBe(true);
  });

  it("content blocks, and Message.text joining their text", () => {
    const blocks: ContentBlock[] = [
      { type: "text", text: "look at " },
      { type: "image", url: "https://example.com/a.png" },
      { type: "text", text: "this" },
    ];
    const message = Message.user(blocks);
    expect(message.content).toEqual(blocks);
    expect(Message.text(message)).toBe("look at this");
    expect(Message.text(Message.assistant("plain"))).toBe("plain");
  });
});

describe("Message JSON", () => {
  const samples = () => [
    Message.system("s"),
    Message.user([{ type: "file", data: "aGk=", mediaType: "text/plain", filename: "a.txt" }]),
    Message.assistant("", [{ id: "call_1", name: "lookup", arguments: "{}" }], {
      usage: { totalTokens: 9 },
    }),
    Message.tool("call_1", "boom", { isError: true }),
  ];

  it("survives a JSON round trip unchanged", () => {
    for (const message of samples()) {
      const json = JSON.stringify(message);
      expect(JSON.parse(json)).toEqual(message);
      expect(Message.parse(json)).toEqual(message);
      expect(Message.parse(JSON.parse(json))).toEqual(message);
      expect(Message.is(JSON.parse(json))).toBe(true);
    }
  });

  it("holds only plain JSON values", () => {
    for (const message of samples()) {
      expect(structuredClone(message)).toEqual(message);
      expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
    }
  });

  function parseError(json: unknown): z.ZodError {
    try {
      Message.parse(json);
    } catch (error) {
      expect(error).toBeInstanceOf(z.ZodError);
      return error as z.ZodError;
    }
    throw new Error("Message.parse accepted invalid input");
  }

  it("Message.parse names the bad field", () => {
    const { id: _id, ...noId } = Message.user("x");
    expect(parseError(noId).issues[0]?.path).toEqual(["id"]);

    const { toolCallId: _t, ...noCallId } = Message.tool("call_1", "x");
    expect(parseError(noCallId).issues[0]?.path).toEqual(["toolCallId"]);

    const badCalls = { ...Message.assistant("x"), toolCalls: [{ id: "c", name: "n" }] };
    expect(parseError(badCalls).issues[0]?.path).toEqual(["toolCalls", 0, "arguments"]);

    const badContent = { ...Message.user("x"), content: 42 };
    expect(parseError(badContent).issues[0]?.path).toEqual(["content"]);
  });

  it("Message.parse rejects an unknown role, an empty id and non-objects", () => {
    parseError({ ...Message.user("x"), role: "robot" });
    parseError({ ...Message.user("x"), id: "" });
    parseError(null);
    parseError("42");
    expect(Message.is({ role: "user", content: "no id" })).toBe(false);
  });

  it("Message.parse of a string that is not JSON throws a SyntaxError", () => {
    expect(() => Message.parse("{not json")).toThrow(SyntaxError);
  });

  it("messageSchema is the schema Message.parse uses", () => {
    const message = Message.user("x");
    expect(messageSchema.parse(message)).toEqual(message);
  });
});

describe("message ids are stable once persisted", () => {
  it("keeps every id through the store, a reload and later turns", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const lookup = tool({
      name: "lookup",
      description: "Look up an order",
      schema: z.object({ id: z.string() }),
      execute: async ({ id }) => `order ${id}`,
    });
    const build = () =>
      new StateGraph()
        .addNode(
          "MAIN",
          new ScriptedModel([
            { toolCalls: [{ name: "lookup", args: { id: "7" } }] },
            "done",
            "again",
          ]),
        )
        .addNode("TOOL", new ToolNode([lookup]))
        .addConditionalEdges("MAIN", (s) =>
          s.messages.at(-1)?.role === "assistant" && s.messages.at(-1)?.toolCalls ? "TOOL" : END,
        )
        .addEdge("TOOL", "MAIN")
        .setEntryPoint("MAIN")
        .compile({ checkpointer, logger: recordingLogger() });

    const question = Message.user("where is order 7?");
    const first = await build().invoke({ messages: [question] }, { threadId: "t" });
    const ids = first.state.messages.map((m) => m.id);
    expect(ids).toHaveLength(4);
    expect(ids[0]).toBe(question.id);
    for (const id of ids) expect(id).toMatch(UUID_V7);

    // A fresh app (as after a restart) reads the same ids back.
    const reloaded = await build().getState({ threadId: "t" });
    expect(reloaded?.values.messages.map((m) => m.id)).toEqual(ids);
    expect(reloaded?.values.messages).toEqual(first.state.messages);
    expect((await checkpointer.listMessages("t")).map((m) => m.id)).toEqual(ids);

    // A later turn appends; the earlier messages keep their ids.
    const second = await build().invoke({ messages: [Message.user("thanks")] }, { threadId: "t" });
    expect(second.state.messages.slice(0, 4).map((m) => m.id)).toEqual(ids);
    expect(second.state.messages).toHaveLength(6);
  });
});

describe("isPlainMessage, the schema's fast path", () => {
  const valid = { id: "m1", createdAt: "2026-01-01T00:00:00.000Z", content: "hi" };
  const call = { id: "c1", name: "echo", arguments: "{}" };
  it("accepts the common shapes, each of which the schema accepts", () => {
    const plain: unknown[] = [
      Message.system("s"),
      Message.user("u"),
      Message.assistant("a"),
      Message.assistant("", [call, { ...call, id: "c2" }]),
      Message.tool("c1", "done"),
      Message.tool("c1", "failed", { isError: true }),
      { ...valid, role: "user", extra: { any: "thing" } },
      { ...valid, role: "assistant", toolCalls: [{ ...call, extra: 1 }] },
    ];
    for (const value of plain) {
      expect(isPlainMessage(value)).toBe(true);
      expect(messageSchema.safeParse(value).success).toBe(true);
    }
  });

  it("leaves every other value to the schema, valid or not", () => {
    const others: unknown[] = [
      null,
      "text",
      [valid],
      { ...valid, role: "remove" },
      { ...valid, role: "user", id: "" },
      { ...valid, role: "user", id: 7 },
      { ...valid, role: "user", createdAt: undefined },
      { ...valid, role: "user", content: [{ type: "text", text: "blocks" }] },
      { ...valid, role: "tool" },
      { ...valid, role: "tool", toolCallId: "c1", isError: "yes" },
      { ...valid, role: "assistant", toolCalls: "none" },
      { ...valid, role: "assistant", toolCalls: [{ ...call, arguments: {} }] },
      { ...valid, role: "assistant", toolCalls: [{ ...call, providerMetadata: { p: { k: 1 } } }] },
      { ...valid, role: "assistant", usage: { inputTokens: 1 } },
      { ...valid, role: "assistant", reasoning: [{ text: "because" }] },
    ];
    for (const value of others) expect(isPlainMessage(value)).toBe(false);
    // Not the fast path's shape, yet messages: the schema still takes them.
    expect(Message.is(others[7])).toBe(true);
    expect(Message.is(others[12])).toBe(true);
    expect(Message.is(others[9])).toBe(false);
  });
});
