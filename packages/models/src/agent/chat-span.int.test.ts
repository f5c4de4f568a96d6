import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { Message, type BaseState } from "@tenxgraph/core";
import { supportAgent, supportTools } from "@tenxgraph/core/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { spanTree, testTracer } from "../../../core/src/support/test-tracer.js";
import { FakeOpenAIServer, type FakeReply } from "../support/fake-openai-server.js";
import { recordingLogger } from "../support/graphs.js";
import { rateLimited, streamedReply } from "../support/openai-replies.js";
import type { AgentTracing } from "./chat-span.js";
import { Agent } from "./agent.js";

const [lookupOrder] = supportTools();
// Model spans join the step's span through the active context, as under the Node SDK.
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => {
  context.disable();
});

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function traced(replies: FakeReply[], tracing: Omit<AgentTracing, "tracer"> = {}) {
  server = await FakeOpenAIServer.start(replies);
  const { tracer, spans } = testTracer();
  const agent = new Agent({
    model: "openai/gpt-4o-mini",
    provider: { baseURL: server.baseURL, apiKey: "sk-test" },
    retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 20 },
    tools: [lookupOrder],
    tracing: { tracer, ...tracing },
  });
  const app = supportAgent<BaseState>({
    model: agent,
    tools: [lookupOrder],
    logger: recordingLogger(),
    tracing: { tracer, name: "support" },
  });
  const result = await app.invoke({ messages: [Message.user("where is order 4821?")] }, {});
  expect(result.status).toBe("completed");
  return spans();
}

const CALL = { id: "call_1", name: "lookup_order", argumentChunks: ['{"order_id":"4821"}'] };

describe("Agent: a chat span per model step", () => {
  it("under the step's span: model, token usage, finish reason, a retry as an event", async () => {
    const spans = await traced([
      rateLimited("0"),
      streamedReply({ toolCalls: [CALL], usage: { prompt: 31, completion: 9 } }),
      streamedReply({ text: ["Shipped."], usage: { prompt: 52, completion: 3 } }),
    ]);
    const tree = spanTree(spans);
    expect(tree.split("\n").map((line) => line.trim().split("  ")[0])).toEqual([
      "invoke_agent support",
      "step MAIN",
      "chat gpt-4o-mini",
      "· event tenxgraph.model.retry",
      "step TOOL",
      "execute_tool lookup_order",
      "step MAIN",
      "chat gpt-4o-mini",
    ]);
    const [first, second] = spans.filter((span) => span.name === "chat gpt-4o-mini");
    expect(first!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.usage.input_tokens": 31,
      "gen_ai.usage.output_tokens": 9,
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "tenxgraph.model.attempts": 2,
    });
    expect(first!.attributes["gen_ai.provider.name"]).toMatch(/^openai/);
    expect(first!.events[0]!.attributes).toMatchObject({
      "tenxgraph.model.attempt": 1,
      "error.type": "429",
    });
    expect(second!.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 52,
      "gen_ai.response.finish_reasons": ["stop"],
    });
    // Message content is off by default.
    expect(first!.attributes["gen_ai.input.messages"]).toBeUndefined();
    expect(second!.attributes["gen_ai.output.messages"]).toBeUndefined();
  });

  it("records the messages sent and the reply with recordContent", async () => {
    const spans = await traced(
      [streamedReply({ toolCalls: [CALL] }), streamedReply({ text: ["Shipped."] })],
      { recordContent: true },
    );
    const last = spans.filter((span) => span.name === "chat gpt-4o-mini").at(-1)!;
    expect(String(last.attributes["gen_ai.input.messages"])).toContain("where is order 4821?");
    expect(JSON.parse(String(last.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", content: "Shipped.", toolCalls: [] },
    ]);
  });
});
