import {
  AIMessage,
  AIMessageChunk,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from "@langchain/core/messages";
import { isTenxgraphError, type Message } from "@tenxgraph/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromLangChain, toLangChain } from "./convert-messages.js";
import { langchainInput } from "./langchain-input.js";

const id = fc.uuid();
const at = fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
const block = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text: fc.string() }),
  fc.record({
    type: fc.constant("image" as const),
    url: fc.webUrl(),
    mediaType: fc.constantFrom("image/png", "image/jpeg"),
  }),
  fc.record({ type: fc.constant("image" as const), data: fc.base64String({ minLength: 4 }) }),
);
const content = fc.oneof(fc.string(), fc.array(block, { maxLength: 3 }));
const args = fc.oneof(
  fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue()).map((o) => JSON.stringify(o)),
  fc.constant("not json"),
);
const toolCall = fc.record(
  {
    id: fc.string({ minLength: 1 }),
    name: fc.string({ minLength: 1 }),
    arguments: args,
    providerMetadata: fc.constant({ google: { thoughtSignature: "sig" } }),
  },
  { requiredKeys: ["id", "name", "arguments"] },
);
const usage = fc.record(
  { inputTokens: fc.nat(), outputTokens: fc.nat(), totalTokens: fc.nat() },
  { requiredKeys: [] },
);

/** Any message of ours, with every optional part LangChain has no field for. */
const ours: fc.Arbitrary<Message> = fc.oneof(
  fc.record({
    id,
    role: fc.constantFrom("system" as const, "user" as const),
    content,
    createdAt: at,
  }),
  fc.record(
    {
      id,
      role: fc.constant("assistant" as const),
      content,
      createdAt: at,
      toolCalls: fc.uniqueArray(toolCall, { selector: (c) => c.id, minLength: 1, maxLength: 3 }),
      usage,
      reasoning: fc.array(fc.record({ text: fc.string() }), { minLength: 1, maxLength: 2 }),
    },
    { requiredKeys: ["id", "role", "content", "createdAt"] },
  ),
  fc.record(
    {
      id,
      role: fc.constant("tool" as const),
      content,
      createdAt: at,
      toolCallId: fc.string({ minLength: 1 }),
      isError: fc.constant(true),
    },
    { requiredKeys: ["id", "role", "content", "createdAt", "toolCallId"] },
  ),
);

describe("messages between tenxgraph and LangChain", () => {
  it("gives back the same message after a trip through LangChain's classes", () => {
    fc.assert(
      fc.property(ours, (message) => {
        const lc = toLangChain(message);
        expect(fromLangChain(lc)).toEqual(message);
        // ... and through LangChain's JSON, as a message stored by LangChain would come back.
        expect(fromLangChain(JSON.parse(JSON.stringify(lc)))).toEqual(message);
      }),
    );
  });

  it("keeps a call's provider data and raw arguments when its id is __proto__", () => {
    // fast-check's counterexample: LangChain copies kwargs by assignment, which drops this key.
    const message: Message = {
      id: "m1",
      role: "assistant",
      content: "",
      createdAt: "2026-12-05T12:00:00.000Z",
      toolCalls: [
        {
          id: "__proto__",
          name: "charge",
          arguments: '{ "order": "5" }',
          providerMetadata: { google: { thoughtSignature: "sig" } },
        },
      ],
    };
    const lc = toLangChain(message);
    expect(fromLangChain(lc)).toEqual(message);
    expect(fromLangChain(JSON.parse(JSON.stringify(lc)))).toEqual(message);
  });

  it("keeps arguments with an lc or __proto__ key through LangChain's JSON", () => {
    // fast-check's counterexample: LangChain's JSON wraps { lc: ... } as { __lc_escaped__: ... }.
    const message: Message = {
      id: "m1",
      role: "assistant",
      content: [],
      createdAt: "2026-12-07T12:00:00.000Z",
      toolCalls: [
        { id: "c1", name: "tag", arguments: '{" ":{"lc":""}}' },
        { id: "c2", name: "tag", arguments: '{"a":[{"__lc_escaped__":1}],"lc":2}' },
        // LangChain's JSON copies by assignment, which drops a __proto__ key (fast-check's too).
        { id: "c3", name: "tag", arguments: '{"__proto__":0}' },
        { id: "c4", name: "tag", arguments: '{"a":[{"__proto__":{"b":1}}]}' },
      ],
    };
    const json = JSON.parse(JSON.stringify(toLangChain(message)));
    expect(json.kwargs.tool_calls[0].args).toEqual({ " ": { __lc_escaped__: { lc: "" } } });
    expect(fromLangChain(json)).toEqual(message);
  });

  it("makes each role LangChain's class, with tool calls, ids and usage where LangChain keeps them", () => {
    const call = { id: "c1", name: "charge", arguments: '{"order":"5"}' };
    const ai = toLangChain({
      id: "m1",
      role: "assistant",
      content: "",
      createdAt: "2026-12-05T12:00:00.000Z",
      toolCalls: [call],
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    });
    expect(AIMessage.isInstance(ai)).toBe(true);
    expect(ai).toMatchObject({
      id: "m1",
      tool_calls: [{ id: "c1", name: "charge", args: { order: "5" }, type: "tool_call" }],
      usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
    });
    const tool = toLangChain({
      id: "m2",
      role: "tool",
      content: "Charged",
      createdAt: "2026-12-05T12:00:00.000Z",
      toolCallId: "c1",
    });
    expect(ToolMessage.isInstance(tool) && tool.tool_call_id).toBe("c1");
  });

  it("gives back LangChain's message after a trip through ours, metadata included", () => {
    const theirs: BaseMessage[] = [
      new SystemMessage({ content: "be brief", id: "s1" }),
      new HumanMessage({
        id: "h1",
        name: "ada",
        content: [
          { type: "text", text: "look" },
          { type: "image", url: "https://example.com/a.png", mime_type: "image/png" },
        ],
      }),
      new AIMessage({
        id: "a1",
        content: "calling",
        tool_calls: [{ id: "c1", name: "charge", args: { order: 5 }, type: "tool_call" }],
        usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
        response_metadata: { model_name: "gpt-x", finish_reason: "tool_calls" },
        additional_kwargs: { refusal: null },
      }),
      new ToolMessage({ id: "t1", content: "done", tool_call_id: "c1", status: "error" }),
    ];
    for (const message of theirs) {
      const back = toLangChain(fromLangChain(message));
      expect(back.constructor).toBe(message.constructor);
      const { tenxgraph: _ours, ...kwargs } = back.additional_kwargs;
      expect({ ...back, additional_kwargs: kwargs, lc_kwargs: undefined }).toMatchObject({
        ...message,
        lc_kwargs: undefined,
      });
    }
  });

  it("reads chunks, LangChain's constructor JSON and the { type, content } form", () => {
    const chunk = new AIMessageChunk({
      content: "a",
      tool_call_chunks: [{ id: "c1", name: "x", args: '{"n":1}', index: 0 }],
    });
    expect(fromLangChain(chunk)).toMatchObject({
      role: "assistant",
      toolCalls: [{ id: "c1", name: "x", arguments: '{"n":1}' }],
    });
    const json = JSON.parse(JSON.stringify(new HumanMessage({ content: "hi", id: "h9" })));
    expect(json).toMatchObject({ lc: 1, type: "constructor" });
    expect(fromLangChain(json)).toMatchObject({ id: "h9", role: "user", content: "hi" });
    expect(fromLangChain({ type: "human", content: "yo" })).toMatchObject({
      role: "user",
      content: "yo",
    });
  });

  it("converts a graph input's LangChain messages, keeping ours, and names a bad one", () => {
    const mine = {
      id: "u1",
      role: "user" as const,
      content: "x",
      createdAt: "2026-12-05T12:00:00.000Z",
    };
    const input = langchainInput({ messages: [mine, new HumanMessage("hi")], topic: "t" });
    expect(input.topic).toBe("t");
    expect(input.messages?.[0]).toBe(mine);
    expect(input.messages?.[1]).toMatchObject({ role: "user", content: "hi" });
    let error: unknown;
    try {
      langchainInput({ messages: [new HumanMessage("hi"), { type: "tool", content: "x" }] });
    } catch (caught) {
      error = caught;
    }
    expect(isTenxgraphError(error, "INPUT_001")).toBe(true);
    expect((error as Error).message).toMatch(/input\.messages\.1\.tool_call_id/);
  });
});
