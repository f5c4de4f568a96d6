import { END, Message, StateGraph, isTenxgraphError, tool, type BaseState } from "@tenxgraph/core";
import { recordingLogger } from "@tenxgraph/core/testing";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createReactAgent } from "../react/create-react-agent.js";
import { Agent } from "./agent.js";

type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P>
    ? P
    : never;
type CallOptions = Parameters<MockLanguageModelV3["doStream"]>[0];

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A reply: text, or one tool call. */
type Turn = string | { call: string; args: object };

function partsOf(turn: Turn, index: number): StreamPart[] {
  const body: StreamPart[] =
    typeof turn === "string"
      ? [
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: turn },
          { type: "text-end", id: "t" },
        ]
      : [
          {
            type: "tool-call",
            toolCallId: `call_${index}`,
            toolName: turn.call,
            input: JSON.stringify(turn.args),
          },
        ];
  const finish = typeof turn === "string" ? "stop" : "tool-calls";
  return [
    { type: "stream-start", warnings: [] },
    ...body,
    { type: "finish", finishReason: { unified: finish, raw: finish }, usage },
  ];
}

/** A model object answering request n with `turns[n]`, keeping what each request asked. */
function scripted(turns: Turn[]) {
  let asked = 0;
  return new MockLanguageModelV3({
    doStream: async () => {
      const index = asked++;
      const turn = turns[index];
      if (turn === undefined) throw new Error(`no reply ${index + 1} scripted`);
      return { stream: convertArrayToReadableStream(partsOf(turn, index)) };
    },
  });
}

/** The prompt of a request as `role: text` lines. */
function lines(call: CallOptions): string[] {
  return call.prompt.map((message) => {
    const content =
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => ("text" in part ? part.text : part.type)).join("");
    return `${message.role}: ${content}`;
  });
}

const Weather = z.object({ conditions: z.string().describe("Weather conditions") });
const getWeather = tool({
  name: "get_weather",
  description: "Use this to get weather information.",
  schema: z.object({ city: z.enum(["nyc", "sf"]) }),
  execute: ({ city }) => (city === "nyc" ? "It might be cloudy in nyc" : "It's always sunny in sf"),
});
let thread = 0;
const config = () => ({ threadId: `structured-${(thread += 1)}` });
const ask = (text: string) => ({ messages: [Message.user(text)] });
const quiet = { logger: recordingLogger() };

describe("responseFormat: a structured response after the final answer", () => {
  it("makes one more request with the schema once the tools are done, into structuredResponse", async () => {
    const model = scripted([
      { call: "get_weather", args: { city: "nyc" } },
      "It might be cloudy in nyc.",
      '{"conditions":"cloudy"}',
    ]);
    const app = createReactAgent({
      model,
      tools: [getWeather],
      systemPrompt: "You answer weather questions.",
      responseFormat: Weather,
      compile: quiet,
    });
    const result = await app.invoke(ask("What's the weather in NYC?"), config());
    expect(result.status).toBe("completed");
    expect(result.state.structuredResponse).toEqual({ conditions: "cloudy" });
    // The structured response is state, not a message: the transcript ends with the answer.
    expect(result.state.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(Message.text(result.state.messages.at(-1)!)).toBe("It might be cloudy in nyc.");
    const calls = model.doStreamCalls;
    expect(calls).toHaveLength(3);
    // The tool rounds ask in text with the tools; the last request asks for JSON, without them.
    expect(calls[1]!.responseFormat).toBeUndefined();
    expect(calls[2]!.tools).toBeUndefined();
    expect(calls[2]!.responseFormat).toMatchObject({
      type: "json",
      schema: { type: "object", properties: { conditions: { type: "string" } } },
    });
    // With what the model was sent and its answer, and neither the agent's prompt nor another.
    expect(lines(calls[2]!)).toEqual([
      "user: What's the weather in NYC?",
      "assistant: tool-call",
      "tool: tool-result",
      "assistant: It might be cloudy in nyc.",
    ]);
  });

  it("{ prompt, schema } and [prompt, schema] send the prompt as the system prompt of that request", async () => {
    for (const responseFormat of [
      { prompt: "Always return capitalized weather conditions", schema: Weather },
      ["Always return capitalized weather conditions", Weather] as const,
    ]) {
      const model = scripted(["Cloudy.", '{"conditions":"CLOUDY"}']);
      const app = createReactAgent({ model, tools: [], responseFormat, compile: quiet });
      const result = await app.invoke(ask("weather?"), config());
      expect(result.state.structuredResponse).toEqual({ conditions: "CLOUDY" });
      expect(lines(model.doStreamCalls[1]!)[0]).toBe(
        "system: Always return capitalized weather conditions",
      );
    }
  });

  it("an Agent in a graph of your own returns the answer and structuredResponse as one update", async () => {
    const schema = z.object({ structuredResponse: Weather.optional() });
    const model = scripted(["Sunny.", '{"conditions":"sunny"}']);
    const app = new StateGraph(schema)
      .addNode("MAIN", new Agent({ model, responseFormat: Weather }))
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile(quiet);
    const result = await app.invoke(ask("weather?"), config());
    expect(result.state.structuredResponse).toEqual({ conditions: "sunny" });
    expect(result.state.messages.map((m) => Message.text(m))).toEqual(["weather?", "Sunny."]);
  });

  it.each([
    { reply: "Cloudy, I think.", says: "the structured response is not JSON" },
    { reply: '{"conditions":42}', says: "does not match responseFormat's schema (conditions:" },
  ])(
    "a reply the schema refuses ($reply) fails the node with MODEL_006",
    async ({ reply, says }) => {
      const model = scripted(["Cloudy.", reply]);
      const app = createReactAgent({ model, tools: [], responseFormat: Weather, compile: quiet });
      const thread = config();
      const error = await app.invoke(ask("weather?"), thread).then(
        () => expect.unreachable("the run should have failed"),
        (e: unknown) => e,
      );
      expect(isTenxgraphError(error, "MODEL_006")).toBe(true);
      expect((error as Error).message).toContain(says);
      const state = await app.getState(thread);
      expect(state?.values.structuredResponse).toBeUndefined();
    },
  );

  it("refuses a malformed responseFormat when the agent is built", () => {
    for (const responseFormat of [{}, ["prompt"], { schema: Weather, prompt: 3 }, "json"]) {
      expect(() => new Agent({ model: scripted([]), responseFormat } as never)).toThrow(
        "Agent: responseFormat must be a zod schema, { schema, prompt? } or [prompt, schema]",
      );
    }
  });
});

describe("prompt and preModelHook: LangGraph.js's names for systemPrompt and prepareMessages", () => {
  const history = [Message.user("u1"), Message.assistant("a1"), Message.user("u2")];
  const firstRequest = async (options: object, state: Partial<BaseState> = {}) => {
    const model = scripted(["Sure."]);
    const app = createReactAgent({ model, tools: [], ...options, compile: quiet });
    const result = await app.invoke({ messages: history, ...state }, config());
    expect(result.state.messages).toHaveLength(history.length + 1);
    return lines(model.doStreamCalls[0]!);
  };

  it("a string or a system message is the system prompt", async () => {
    for (const prompt of ["Be brief.", Message.system("Be brief.")]) {
      expect(await firstRequest({ prompt })).toEqual([
        "system: Be brief.",
        "user: u1",
        "assistant: a1",
        "user: u2",
      ]);
    }
  });

  it("a function of the state returns the whole request; the transcript keeps everything", async () => {
    const prompt = (state: BaseState) => [Message.system("Be brief."), ...state.messages.slice(-1)];
    expect(await firstRequest({ prompt })).toEqual(["system: Be brief.", "user: u2"]);
  });

  it("preModelHook returns { llmInputMessages }; returning messages is refused", async () => {
    const preModelHook = async (state: BaseState) => ({
      llmInputMessages: state.messages.slice(-1),
    });
    expect(await firstRequest({ preModelHook, systemPrompt: "Hi." })).toEqual([
      "system: Hi.",
      "user: u2",
    ]);
    const rewriting = () => ({ messages: [] });
    const model = scripted(["Sure."]);
    const app = createReactAgent({
      model,
      tools: [],
      preModelHook: rewriting as never,
      compile: quiet,
    });
    await expect(app.invoke(ask("hi"), config())).rejects.toThrow(
      "Agent: preModelHook returned 'messages': here it only chooses what the model is sent",
    );
  });

  it("two names for one thing are refused when the agent is built", () => {
    const model = scripted([]);
    const both = [
      [{ prompt: "a", systemPrompt: "b" }, "'prompt' and 'systemPrompt'"],
      [{ prompt: () => [], prepareMessages: () => [] }, "'prompt' and 'prepareMessages'"],
      [
        { preModelHook: () => ({}), prepareMessages: () => [] },
        "'prepareMessages' and 'preModelHook'",
      ],
    ] as const;
    for (const [options, names] of both) {
      expect(() => new Agent({ model, ...options } as never)).toThrow(
        `Agent: ${names} say the same thing; give one`,
      );
    }
    expect(() => new Agent({ model, prompt: Message.user("x") } as never)).toThrow(
      "Agent: prompt must be a string, a system message or a function",
    );
  });
});
