import { describe, expect, it } from "vitest";
import type { Message } from "./message.js";
import { fromLcMessage, toLcMessage } from "./lc-messages.js";

const at = "2026-12-05T12:00:00.000Z";

/** One message of each role, with what LangChain has no field for. */
const messages: Message[] = [
  { id: "m1", role: "system", content: "be brief", createdAt: at },
  {
    id: "m2",
    role: "user",
    content: [
      { type: "text", text: "look" },
      { type: "image", url: "https://example.com/a.png", mediaType: "image/png" },
      { type: "file", data: "aGk=", mediaType: "text/plain", filename: "hi.txt" },
    ],
    createdAt: at,
  },
  {
    id: "m3",
    role: "assistant",
    content: "",
    createdAt: at,
    toolCalls: [
      {
        id: "c1",
        name: "charge",
        arguments: '{"order_id":"5"}',
        providerMetadata: { google: { sig: "x" } },
      },
      { id: "c2", name: "bad", arguments: "not json" },
    ],
    usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    reasoning: [{ text: "thinking" }],
  },
  { id: "m4", role: "tool", content: "Charged", createdAt: at, toolCallId: "c1" },
  { id: "m5", role: "tool", content: "failed", createdAt: at, toolCallId: "c2", isError: true },
];

describe("LangChain's serialized messages", () => {
  it("maps ours to theirs and back without loss", () => {
    for (const message of messages) {
      const lc = toLcMessage(message);
      expect(fromLcMessage(JSON.parse(JSON.stringify(lc)), ["m"])).toEqual(message);
    }
  });

  it("reads per-call data written keyed by call id, as releases before pairs wrote it", () => {
    const older = {
      type: "ai",
      id: "m3",
      content: "",
      tool_calls: [{ id: "c1", name: "charge", args: { order_id: "5" }, type: "tool_call" }],
      additional_kwargs: {
        tenxgraph: {
          created_at: at,
          provider_metadata: { c1: { google: { sig: "x" } } },
          raw_arguments: { c1: '{ "order_id": "5" }' },
        },
      },
    };
    expect(fromLcMessage(older, ["m"])).toMatchObject({
      toolCalls: [
        {
          id: "c1",
          arguments: '{ "order_id": "5" }',
          providerMetadata: { google: { sig: "x" } },
        },
      ],
    });
  });

  it("shows tool calls with args objects, and tool results with tool_call_id", () => {
    const lc = toLcMessage(messages[2]!);
    expect(lc).toMatchObject({
      type: "ai",
      tool_calls: [{ id: "c1", name: "charge", args: { order_id: "5" }, type: "tool_call" }],
      invalid_tool_calls: [{ id: "c2", name: "bad", args: "not json" }],
      usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
    });
    expect(toLcMessage(messages[4]!)).toMatchObject({
      type: "tool",
      tool_call_id: "c2",
      status: "error",
    });
  });

  it("takes the { role, content } shorthand and mints ids", () => {
    const message = fromLcMessage({ role: "user", content: "hi" }, ["m"]);
    expect(message).toMatchObject({ role: "user", content: "hi" });
    expect(message.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses an unknown type, a tool result without its call, an unknown block", () => {
    expect(() => fromLcMessage({ type: "robot", content: "x" }, ["m"])).toThrow(
      /unknown message type 'robot'/,
    );
    expect(() => fromLcMessage({ type: "tool", content: "x" }, ["m"])).toThrow(/tool_call_id/);
    expect(() => fromLcMessage({ type: "human", content: [{ type: "audio" }] }, ["m"])).toThrow(
      /unsupported content block type 'audio'/,
    );
  });
});
