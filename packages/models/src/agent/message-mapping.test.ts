import { Message, tool } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  acceptsMediaInToolResults,
  toModelMessages,
  toTokenUsage,
  toToolSet,
} from "./message-mapping.js";

const call = (id: string, name: string, args: string) => ({ id, name, arguments: args });

describe("toModelMessages", () => {
  it("maps each role, tool calls with parsed input, and tool results by the issuing call", () => {
    const mapped = toModelMessages([
      Message.system("Be brief."),
      Message.user("charge 4821"),
      Message.assistant("On it.", [call("call_1", "charge_card", '{"order_id":"4821"}')]),
      Message.tool("call_1", "Charged 42 USD"),
      Message.tool("call_1", "Tool 'charge_card' failed: [TOOL_ERROR_001] declined", {
        isError: true,
      }),
    ]);
    expect(mapped).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "charge 4821" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "On it." },
          {
            type: "tool-call",
            toolCallId: "call_1",
            toolName: "charge_card",
            input: { order_id: "4821" },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "charge_card",
            output: { type: "text", value: "Charged 42 USD" },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "charge_card",
            output: {
              type: "error-text",
              value: "Tool 'charge_card' failed: [TOOL_ERROR_001] declined",
            },
          },
        ],
      },
    ]);
  });

  it("names a reused call id after the latest assistant message that issued it", () => {
    const mapped = toModelMessages([
      Message.assistant("", [call("call_1", "charge_card", "{}")]),
      Message.tool("call_1", "charged"),
      Message.assistant("", [call("call_1", "refund_payment", "{}")]),
      Message.tool("call_1", "refunded"),
    ]);
    const names = mapped
      .filter((m) => m.role === "tool")
      .map((m) => (m.content as { toolName: string }[])[0]!.toolName);
    expect(names).toEqual(["charge_card", "refund_payment"]);
  });

  it("sends arguments that are not a JSON object as {} so the provider accepts the thread", () => {
    const [assistant] = toModelMessages([
      Message.assistant("", [
        call("a", "t", '{"order_id":'),
        call("b", "t", "[1,2]"),
        call("c", "t", ""),
      ]),
    ]);
    const inputs = (assistant!.content as { input: unknown }[]).map((p) => p.input);
    expect(inputs).toEqual([{}, {}, {}]);
  });

  it("sends reasoning first and each part's provider data back, also after a store round trip", () => {
    const stored = Message.parse(
      JSON.stringify({
        ...Message.assistant("Looking.", [
          {
            ...call("call_1", "lookup_order", "{}"),
            providerMetadata: { google: { thoughtSignature: "c2ln" } },
          },
        ]),
        reasoning: [
          { text: "Look it up.", providerMetadata: { anthropic: { signature: "EqQB" } } },
          { text: "", providerMetadata: { anthropic: { redactedData: "xyz" } } },
        ],
      }),
    );
    const [assistant] = toModelMessages([stored]);
    expect(assistant!.content).toEqual([
      {
        type: "reasoning",
        text: "Look it up.",
        providerOptions: { anthropic: { signature: "EqQB" } },
      },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "xyz" } } },
      { type: "text", text: "Looking." },
      {
        type: "tool-call",
        toolCallId: "call_1",
        toolName: "lookup_order",
        input: {},
        providerOptions: { google: { thoughtSignature: "c2ln" } },
      },
    ]);
  });

  it("maps content blocks: user images and files, tool results with media", () => {
    const [user, , toolResult] = toModelMessages([
      Message.user([
        { type: "text", text: "What is on this receipt?" },
        { type: "image", url: "https://example.com/r.png" },
        { type: "file", data: "JVBERi0=", mediaType: "application/pdf", filename: "r.pdf" },
      ]),
      Message.assistant("", [call("call_9", "render", "{}")]),
      Message.tool("call_9", [
        { type: "text", text: "chart" },
        { type: "image", data: "iVBOR", mediaType: "image/png" },
      ]),
    ]);
    expect(user!.content).toEqual([
      { type: "text", text: "What is on this receipt?" },
      { type: "image", image: new URL("https://example.com/r.png") },
      { type: "file", data: "JVBERi0=", mediaType: "application/pdf", filename: "r.pdf" },
    ]);
    expect((toolResult!.content as { output: unknown }[])[0]!.output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "chart" },
        { type: "image-data", data: "iVBOR", mediaType: "image/png" },
      ],
    });
  });

  it("puts a placeholder for media in tool results where the API takes only text", () => {
    const transcript = [
      Message.assistant("", [call("call_1", "sales_chart", "{}")]),
      Message.tool("call_1", [
        { type: "text", text: "Sales, last 7 days" },
        { type: "image", data: "iVBOR", mediaType: "image/png" },
        { type: "file", url: "https://example.com/r.pdf", mediaType: "application/pdf" },
      ]),
    ];
    const [, toolMessage] = toModelMessages(transcript, { mediaInToolResults: false });
    expect((toolMessage!.content as { output: unknown }[])[0]!.output).toEqual({
      type: "text",
      value: "Sales, last 7 days\n[image: image/png]\n[file: application/pdf]",
    });
    expect(acceptsMediaInToolResults("openai.chat")).toBe(false);
    expect(acceptsMediaInToolResults("openai-compatible.chat")).toBe(false);
    expect(acceptsMediaInToolResults("anthropic.messages")).toBe(true);
    expect(acceptsMediaInToolResults("google.generative-ai")).toBe(true);
    expect(acceptsMediaInToolResults("openai.responses")).toBe(true);
  });

  it("refuses a tool message that answers no earlier call, naming it", () => {
    const orphan = Message.tool("call_404", "result");
    expect(() => toModelMessages([Message.user("hi"), orphan])).toThrow(
      `Tool message ${orphan.id} answers call 'call_404', but no earlier assistant message issued that call`,
    );
  });
});

describe("toToolSet", () => {
  it("sends each tool's description and its zod schema as JSON Schema, without $schema", async () => {
    const charge = tool({
      name: "charge_card",
      description: "Charge a card.",
      schema: z.object({ order_id: z.string(), amount_cents: z.number().int() }),
      execute: () => "ok",
    });
    const set = toToolSet([charge]);
    expect(Object.keys(set)).toEqual(["charge_card"]);
    expect(set.charge_card!.description).toBe("Charge a card.");
    const { $schema: _dialect, ...expected } = charge.jsonSchema();
    const schema = set.charge_card!.inputSchema as { jsonSchema: unknown };
    expect(await schema.jsonSchema).toEqual(expected);
    expect(expected).toMatchObject({ type: "object", required: ["order_id", "amount_cents"] });
    expect(set.charge_card!.execute).toBeUndefined();
  });
});

describe("toTokenUsage", () => {
  it("keeps the counts the provider reported and drops the rest", () => {
    expect(toTokenUsage(undefined)).toBeUndefined();
    expect(
      toTokenUsage({
        inputTokens: 10,
        outputTokens: undefined,
        totalTokens: 10,
        inputTokenDetails: {
          noCacheTokens: undefined,
          cacheReadTokens: undefined,
          cacheWriteTokens: undefined,
        },
        outputTokenDetails: { textTokens: undefined, reasoningTokens: undefined },
      }),
    ).toEqual({ inputTokens: 10, totalTokens: 10 });
  });
});
