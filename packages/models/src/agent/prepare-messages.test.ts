import {
  END,
  Message,
  StateGraph,
  trimMessages,
  type BaseState,
  type CompiledGraph,
} from "@tenxgraph/core";
import { recordingLogger } from "@tenxgraph/core/testing";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createReactAgent } from "../react/create-react-agent.js";
import type { AgentOptions } from "./agent-options.js";
import { Agent } from "./agent.js";

// The AI SDK's model types, read off its mock rather than imported from `@ai-sdk/provider`.
type Prompt = Parameters<MockLanguageModelV3["doStream"]>[0]["prompt"];
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P>
    ? P
    : never;

/** A model object that answers every request with `text`, and keeps what it was sent. */
function mockModel(text = "Sure.") {
  const parts: StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: text },
    { type: "text-end", id: "t" },
    {
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      },
    },
  ];
  return new MockLanguageModelV3({
    doStream: async () => ({ stream: convertArrayToReadableStream(parts) }),
  });
}

/** The prompt of each request, as `role: text` lines. */
function sent(model: MockLanguageModelV3): string[][] {
  return model.doStreamCalls.map((call) => lines(call.prompt));
}
function lines(prompt: Prompt): string[] {
  return prompt.map((message) => {
    const content =
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => ("text" in part ? part.text : part.type)).join("");
    return `${message.role}: ${content}`;
  });
}

interface Ticket extends BaseState {
  customer?: string;
}

function appOf(agent: Agent<Ticket>): CompiledGraph<Ticket> {
  return new StateGraph<Ticket>()
    .addNode("MAIN", agent)
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ logger: recordingLogger() });
}

const history = [
  Message.user("u1"),
  Message.assistant("a1"),
  Message.user("u2"),
  Message.assistant("a2"),
  Message.user("u3"),
];
const texts = (messages: readonly Message[]) => messages.map((m) => Message.text(m));
let thread = 0;
const config = () => ({ threadId: `prepare-${(thread += 1)}` });

function agentWith(model: MockLanguageModelV3, options: Partial<AgentOptions<Ticket>> = {}) {
  return new Agent<Ticket>({ model, systemPrompt: "You are a support agent.", ...options });
}

describe("Agent: prepareMessages", () => {
  it("sends the model the trimmed window while the thread keeps its whole transcript", async () => {
    const model = mockModel();
    const agent = agentWith(model, {
      prepareMessages: (messages) => trimMessages(messages, { maxMessages: 2 }),
    });
    const result = await appOf(agent).invoke({ messages: history }, config());
    expect(sent(model)).toEqual([
      ["system: You are a support agent.", "assistant: a2", "user: u3"],
    ]);
    expect(texts(result.state.messages)).toEqual(["u1", "a1", "u2", "a2", "u3", "Sure."]);
  });

  it("without it, sends the whole transcript", async () => {
    const model = mockModel();
    await appOf(agentWith(model)).invoke({ messages: history }, config());
    expect(sent(model)[0]).toHaveLength(history.length + 1);
  });

  it("gets a deep copy of the transcript and the state, and may be async", async () => {
    const model = mockModel();
    const seen: { customer?: string; count: number }[] = [];
    const agent = agentWith(model, {
      prepareMessages: async (messages, state) => {
        seen.push({ customer: state.customer, count: messages.length });
        await Promise.resolve();
        // Edits of the list and of its messages change the copy, not the thread.
        messages[0]!.content = "edited in place";
        expect(state.messages).toBe(messages);
        const latest = messages.splice(-1);
        return [Message.user(`Summary so far, for ${state.customer}.`), ...latest];
      },
    });
    const result = await appOf(agent).invoke({ messages: history, customer: "Ada" }, config());
    expect(seen).toEqual([{ customer: "Ada", count: 5 }]);
    expect(sent(model)[0]).toEqual([
      "system: You are a support agent.",
      "user: Summary so far, for Ada.",
      "user: u3",
    ]);
    expect(texts(result.state.messages)).toEqual(["u1", "a1", "u2", "a2", "u3", "Sure."]);
  });

  it("keeps tool rounds whole when trimmed by trimMessages, across a ReAct loop", async () => {
    const model = mockModel("Done.");
    const app = createReactAgent({
      model,
      tools: [],
      prepareMessages: (messages) => trimMessages(messages, { maxMessages: 3 }),
      compile: { logger: recordingLogger() },
    });
    const round = [
      Message.user("charge order 4821"),
      Message.assistant("", [{ id: "call_1", name: "charge_card", arguments: "{}" }]),
      Message.tool("call_1", "Charged 42 USD"),
      Message.assistant("Charged."),
      Message.user("thanks"),
    ];
    const result = await app.invoke({ messages: round }, config());
    // The last 3 would start at the tool message; its call was cut, so the round goes whole.
    expect(sent(model)).toEqual([["assistant: Charged.", "user: thanks"]]);
    expect(result.state.messages).toHaveLength(round.length + 1);
  });

  it("fails the node with a TypeError naming prepareMessages when it returns no messages", async () => {
    const bad: [unknown, string][] = [
      [undefined, "Agent: prepareMessages must return an array of messages, got undefined"],
      [{ messages: [] }, 'must return an array of messages, got {"messages":[]}'],
      [[], "Agent: prepareMessages returned no messages"],
      [[Message.user("hi"), { role: "user" }], "returned a non-message at index 1"],
      [["hi"], "returned a non-message at index 0: hi"],
    ];
    for (const [value, message] of bad) {
      const model = mockModel();
      const agent = agentWith(model, { prepareMessages: () => value as Message[] });
      const error = await appOf(agent)
        .invoke({ messages: history }, config())
        .then(
          () => expect.unreachable("the run should have failed"),
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toContain(message);
      expect(model.doStreamCalls).toHaveLength(0);
    }
  });
});
