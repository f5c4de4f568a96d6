import { createOpenAI } from "@ai-sdk/openai";
import {
  END,
  Message,
  StateGraph,
  ToolNode,
  isTenxgraphError,
  tool,
  type AssistantMessage,
  type BaseState,
  type CompileOptions,
  type RunConfig,
  type StreamEvent,
} from "@tenxgraph/core";
import { supportAgent, supportTools } from "@tenxgraph/core/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { FakeOpenAIServer, type FakeReply, type Responder } from "../support/fake-openai-server.js";
import { collect, recordingLogger } from "../support/graphs.js";
import {
  badRequest,
  insufficientQuota,
  pieces,
  rateLimited,
  serverError,
  streamedReply,
} from "../support/openai-replies.js";
import { anthropicReply, geminiReply } from "../support/provider-replies.js";
import type { AgentOptions } from "./agent-options.js";
import { Agent } from "./agent.js";

// Retries in these tests wait at most a few ms; no test asserts how long anything took.
const FAST_RETRY = { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 20 };
const [lookupOrder, chargeCard] = supportTools();

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.unstubAllEnvs();
});

async function agentOn(replies: FakeReply[] | Responder, options: Partial<AgentOptions> = {}) {
  server = await FakeOpenAIServer.start(replies);
  return new Agent({
    model: "openai/gpt-4o-mini",
    provider: { baseURL: server.baseURL, apiKey: "sk-test" },
    retry: FAST_RETRY,
    tools: [lookupOrder, chargeCard],
    ...options,
  });
}

function appOf(agent: Agent, options: CompileOptions = {}) {
  return supportAgent<BaseState>({
    model: agent,
    tools: [lookupOrder, chargeCard],
    logger: recordingLogger(),
    ...options,
  });
}

const ask = (text: string) => ({ messages: [Message.user(text)] });
let thread = 0;
const config = (extra: RunConfig = {}): RunConfig => ({ threadId: `t-${(thread += 1)}`, ...extra });

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => expect.unreachable("the run should have failed"),
    (e: unknown) => e,
  );
  if (!isTenxgraphError(error)) throw error;
  return error as Error & { code: string; statusCode: number | null; attempts: number };
}

describe("Agent: replies over the wire", () => {
  it("answers with text, records usage, and takes its message id from the runtime", async () => {
    const agent = await agentOn([
      streamedReply({ text: ["Hello", ", how can I help?"], usage: { prompt: 9, completion: 7 } }),
    ]);
    const ids: string[] = [];
    const app = appOf(agent, {
      ids: () => {
        ids.push(`id-${ids.length + 1}`);
        return ids.at(-1)!;
      },
    });
    const result = await app.invoke(ask("hi"), config());
    const reply = result.state.messages.at(-1) as AssistantMessage;
    expect(reply).toMatchObject({
      role: "assistant",
      content: "Hello, how can I help?",
      usage: { inputTokens: 9, outputTokens: 7, totalTokens: 16 },
    });
    expect(reply.toolCalls).toBeUndefined();
    expect(ids).toContain(reply.id);
    expect(Message.parse(JSON.parse(JSON.stringify(reply)))).toEqual(reply);
  });

  it("keeps several tool calls of one message with the provider's ids and raw arguments", async () => {
    const charge = '{"order_id": "4821",  "amount_cents": 4200}'; // spacing as the model wrote it
    const agent = await agentOn([
      streamedReply({
        toolCalls: [
          { id: "call_Lk2pA", name: "lookup_order", argumentChunks: pieces('{"order_id":"4821"}') },
          { id: "call_Zq9wB", name: "charge_card", argumentChunks: pieces(charge, 5) },
          { id: "call_Mm4cC", name: "charge_card", argumentChunks: ['{"order_id":'] },
        ],
        usage: { prompt: 120, completion: 48 },
      }),
      streamedReply({ text: ["Charged."] }),
    ]);
    const result = await appOf(agent).invoke(ask("charge order 4821"), config());
    const [, calls, ...rest] = result.state.messages;
    expect((calls as AssistantMessage).toolCalls).toEqual([
      { id: "call_Lk2pA", name: "lookup_order", arguments: '{"order_id":"4821"}' },
      { id: "call_Zq9wB", name: "charge_card", arguments: charge },
      { id: "call_Mm4cC", name: "charge_card", arguments: '{"order_id":' },
    ]);
    expect((calls as AssistantMessage).usage).toEqual({
      inputTokens: 120,
      outputTokens: 48,
      totalTokens: 168,
    });
    const toolMessages = rest.filter((m) => m.role === "tool");
    expect(toolMessages.map((m) => m.toolCallId)).toEqual([
      "call_Lk2pA",
      "call_Zq9wB",
      "call_Mm4cC",
    ]);
    // The cut-off arguments reach the ToolNode as the model sent them, which tells the model.
    expect(Message.text(toolMessages[2]!)).toContain(
      "[TOOL_ARGS_001] arguments are not valid JSON",
    );
  });

  it("sends the transcript, system prompt, tool schemas and settings as OpenAI expects", async () => {
    const agent = await agentOn(
      [
        streamedReply({
          toolCalls: [
            { id: "call_1", name: "lookup_order", argumentChunks: ['{"order_id":"4821"}'] },
          ],
        }),
        streamedReply({ text: ["Found it."] }),
      ],
      { systemPrompt: "You are a support agent.", temperature: 0.2, maxTokens: 256 },
    );
    await appOf(agent).invoke(ask("where is order 4821?"), config());
    const [first, second] = server!.chatRequests;
    expect(first!.headers.authorization).toBe("Bearer sk-test");
    expect(first!.body).toMatchObject({
      model: "gpt-4o-mini",
      temperature: 0.2,
      max_tokens: 256,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "You are a support agent." },
        { role: "user", content: "where is order 4821?" },
      ],
    });
    const { $schema: _dialect, ...parameters } = lookupOrder.jsonSchema();
    expect((first!.body.tools as unknown[])[0]).toEqual({
      type: "function",
      function: { name: "lookup_order", description: "Find an order.", parameters },
    });
    expect((second!.body.messages as unknown[]).slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "lookup_order", arguments: '{"order_id":"4821"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"order_id":"4821","amount_cents":4200}' },
    ]);
  });

  it("sends its ToolNode's tools as of each run: remote tools attached later, and the run's own", async () => {
    server = await FakeOpenAIServer.start([streamedReply({ text: ["ok"] })]);
    const toolNode = new ToolNode([lookupOrder]);
    const agent = new Agent({
      model: "openai/gpt-4o-mini",
      provider: { baseURL: server.baseURL, apiKey: "sk-test" },
      retry: FAST_RETRY,
      toolNode,
    });
    toolNode.attachRemoteTools([{ name: "get_location", description: "", parameters: {} }]);
    const app = new StateGraph()
      .addNode("MAIN", agent)
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ logger: recordingLogger() });
    const remoteTools = [{ name: "pick_color", description: "A color." }, { name: "lookup_order" }];
    await app.invoke(ask("hi"), config({ remoteTools }));
    const sent = server.chatRequests[0]!.body.tools as {
      function: { name: string; description: string; parameters: unknown };
    }[];
    expect(sent.map((t) => t.function.name)).toEqual([
      "lookup_order",
      "get_location",
      "pick_color",
    ]);
    expect(sent[1]!.function.parameters).toEqual({ type: "object" });
    expect(sent[2]!.function.description).toBe("A color.");
  });

  it("streams token deltas as message_delta events carrying the final message's id", async () => {
    const agent = await agentOn([streamedReply({ text: ["Your ", "order ", "ships ", "today."] })]);
    const { events, error } = await collect(appOf(agent).stream(ask("status?"), config()));
    expect(error).toBeUndefined();
    const deltas = events.filter(
      (e): e is Extract<StreamEvent, { type: "message_delta" }> => e.type === "message_delta",
    );
    const message = events.find((e) => e.type === "message");
    expect(deltas.map((d) => d.delta)).toEqual(["Your ", "order ", "ships ", "today."]);
    expect(message).toMatchObject({
      node: "MAIN",
      message: { content: "Your order ships today." },
    });
    const messageId = (message as Extract<StreamEvent, { type: "message" }>).message.id;
    expect(new Set(deltas.map((d) => d.messageId))).toEqual(new Set([messageId]));
    expect(events.indexOf(deltas.at(-1)!)).toBeLessThan(events.indexOf(message!));
  });

  it("works with a model object and with an openai-compatible endpoint", async () => {
    server = await FakeOpenAIServer.start([
      streamedReply({ text: ["one"] }),
      streamedReply({ text: ["two"], usage: { prompt: 3, completion: 1 } }),
    ]);
    const object = createOpenAI({ baseURL: server.baseURL, apiKey: "k" }).chat("gpt-4o");
    const byObject = new Agent({ model: object, retry: FAST_RETRY });
    expect(byObject.model).toBe("openai.chat/gpt-4o");
    const compatible = new Agent({
      model: "openai-compatible/meta-llama/Llama-3.1-8B-Instruct",
      provider: { baseURL: server.baseURL, apiKey: "local-key" },
    });
    const first = await appOf(byObject).invoke(ask("1"), config());
    const second = await appOf(compatible).invoke(ask("2"), config());
    expect(Message.text(first.state.messages.at(-1)!)).toBe("one");
    expect(second.state.messages.at(-1)).toMatchObject({
      content: "two",
      usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 },
    });
    expect(server.chatRequests[1]!.body).toMatchObject({
      model: "meta-llama/Llama-3.1-8B-Instruct",
      stream_options: { include_usage: true },
    });
    expect(server.chatRequests[1]!.headers.authorization).toBe("Bearer local-key");
  });
});

describe("Agent: what providers sign comes back with the next request", () => {
  it("a Gemini function call's thoughtSignature is kept and sent back with the call", async () => {
    const call = { functionCall: { name: "lookup_order", args: { order_id: "4821" } } };
    const agent = await agentOn(
      [
        geminiReply([{ ...call, thoughtSignature: "c2lnbmF0dXJlLTE=" }]),
        geminiReply([{ text: "Found it." }]),
      ],
      { model: "google/gemini-3-pro-preview" },
    );
    const result = await appOf(agent).invoke(ask("where is 4821?"), config());
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Found it.");
    expect((result.state.messages[1] as AssistantMessage).toolCalls![0]).toMatchObject({
      name: "lookup_order",
      providerMetadata: { google: { thoughtSignature: "c2lnbmF0dXJlLTE=" } },
    });
    const second = server!.requests[1]!.body as {
      contents: { role: string; parts: object[] }[];
    };
    const modelTurn = second.contents.find((c) => c.role === "model")!;
    expect(modelTurn.parts[0]).toMatchObject({
      functionCall: { name: "lookup_order" },
      thoughtSignature: "c2lnbmF0dXJlLTE=",
    });
  });

  it("an Anthropic thinking block is kept with its signature and sent back before its tool_use", async () => {
    const agent = await agentOn(
      [
        anthropicReply(
          [
            { thinking: "I should look the order up.", signature: "EqQBCgIYAhIMsig" },
            { toolUse: { id: "toolu_01", name: "lookup_order", json: '{"order_id":"4821"}' } },
          ],
          "tool_use",
        ),
        anthropicReply([{ text: "Found it." }], "end_turn"),
      ],
      {
        model: "anthropic/claude-sonnet-4-5",
        maxTokens: 4096,
        providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 1024 } } },
      },
    );
    const result = await appOf(agent).invoke(ask("where is 4821?"), config());
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Found it.");
    expect((result.state.messages[1] as AssistantMessage).reasoning).toEqual([
      {
        text: "I should look the order up.",
        providerMetadata: { anthropic: { signature: "EqQBCgIYAhIMsig" } },
      },
    ]);
    const second = server!.requests[1]!.body as {
      messages: { role: string; content: Record<string, unknown>[] }[];
    };
    const assistant = second.messages.find((m) => m.role === "assistant")!;
    expect(assistant.content).toMatchObject([
      { type: "thinking", thinking: "I should look the order up.", signature: "EqQBCgIYAhIMsig" },
      { type: "tool_use", id: "toolu_01", name: "lookup_order", input: { order_id: "4821" } },
    ]);
  });
});

describe("Agent: images a tool returned", () => {
  const pixel =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
  const chart = tool({
    name: "sales_chart",
    description: "Chart of sales.",
    schema: z.object({}),
    execute: () => [
      { type: "text", text: "Sales, last 7 days" },
      { type: "image", data: pixel, mediaType: "image/png" },
    ],
  });
  const run = (agent: Agent) =>
    supportAgent<BaseState>({ model: agent, tools: [chart], logger: recordingLogger() }).invoke(
      ask("chart"),
      config(),
    );

  it("reach OpenAI Chat Completions as a placeholder, not as base64 in the tool's text", async () => {
    const agent = await agentOn(
      [
        streamedReply({
          toolCalls: [{ id: "call_1", name: "sales_chart", argumentChunks: ["{}"] }],
        }),
        streamedReply({ text: ["Nice chart."] }),
      ],
      { tools: [chart] },
    );
    await run(agent);
    const sent = server!.chatRequests[1]!.body.messages as { role: string; content: unknown }[];
    expect(sent.find((m) => m.role === "tool")!.content).toBe(
      "Sales, last 7 days\n[image: image/png]",
    );
  });

  it("reach Anthropic as an image in the tool result", async () => {
    const agent = await agentOn(
      [
        anthropicReply(
          [{ toolUse: { id: "toolu_01", name: "sales_chart", json: "{}" } }],
          "tool_use",
        ),
        anthropicReply([{ text: "Nice chart." }], "end_turn"),
      ],
      { model: "anthropic/claude-sonnet-4-5", tools: [chart] },
    );
    await run(agent);
    const second = server!.requests[1]!.body as {
      messages: { role: string; content: { type: string; content?: unknown }[] }[];
    };
    const result = second.messages.at(-1)!.content.find((c) => c.type === "tool_result")!;
    expect(result.content).toMatchObject([
      { type: "text", text: "Sales, last 7 days" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: pixel } },
    ]);
  });
});

describe("Agent: transient failures are retried", () => {
  it("a 429 then success: waits as retry-after says, logs the retry, and answers", async () => {
    const agent = await agentOn([rateLimited("0"), streamedReply({ text: ["Back again."] })]);
    const logger = recordingLogger();
    const result = await appOf(agent, { logger }).invoke(ask("hi"), config());
    expect(result.status).toBe("completed");
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Back again.");
    expect(server!.chatRequests).toHaveLength(2);
    const retried = logger.records.filter((r) => r.message?.includes("retrying"));
    expect(retried).toHaveLength(1);
    expect(retried[0]!.fields).toMatchObject({
      model: "openai/gpt-4o-mini",
      attempt: 1,
      statusCode: 429,
      delayMs: 0,
      node: "MAIN",
    });
  });

  it("a 500 every time fails the node with MODEL_005 after retry.maxAttempts requests", async () => {
    const agent = await agentOn(() => serverError());
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_005");
    expect(error.statusCode).toBe(500);
    expect(error.attempts).toBe(3);
    expect(error.message).toContain("gave up after 3 attempts");
    expect(error.message).toContain("The server had an error while processing your request");
    expect(server!.chatRequests).toHaveLength(3);
  });

  it("a dropped connection is retried like a 5xx", async () => {
    const agent = await agentOn([{ hangUp: true }, streamedReply({ text: ["Connected."] })]);
    const result = await appOf(agent).invoke(ask("hi"), config());
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Connected.");
    expect(server!.chatRequests).toHaveLength(2);
  });

  it("a stream that breaks after some text is retried under a fresh message id", async () => {
    const started = streamedReply({ text: ["Your order "] }) as { sse: object[] };
    const broken: FakeReply = {
      sse: [
        ...started.sse.slice(0, 2),
        { error: { message: "The server had an error", type: "server_error", param: null } },
      ],
      endWithDone: false,
    };
    const agent = await agentOn([broken, streamedReply({ text: ["Your order ", "shipped."] })]);
    const { events, error } = await collect(appOf(agent).stream(ask("status?"), config()));
    expect(error).toBeUndefined();
    const deltas = events.filter(
      (e): e is Extract<StreamEvent, { type: "message_delta" }> => e.type === "message_delta",
    );
    const message = events.find((e) => e.type === "message") as Extract<
      StreamEvent,
      { type: "message" }
    >;
    expect(message.message.content).toBe("Your order shipped.");
    // The failed attempt's delta names a message that never completes, so no client appends
    // the retry's text to it.
    expect(deltas.map((d) => [d.delta, d.messageId === message.message.id])).toEqual([
      ["Your order ", false],
      ["Your order ", true],
      ["shipped.", true],
    ]);
    expect(server!.chatRequests).toHaveLength(2);
  });

  it("a stream cut by its LiteLLM proxy with an error object coded 503 is retried", async () => {
    const started = streamedReply({ text: ["Your order "] }) as { sse: object[] };
    const broken: FakeReply = {
      sse: [
        ...started.sse.slice(0, 2),
        // LiteLLM's shape of an upstream failure inside a stream: the status is in `code`.
        { error: { message: "Service Unavailable", type: "None", param: "None", code: "503" } },
      ],
      endWithDone: false,
    };
    const agent = await agentOn([broken, streamedReply({ text: ["Shipped."] })], {
      model: "openai-compatible/llama-3.1-8b",
    });
    const result = await appOf(agent).invoke(ask("hi"), config());
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Shipped.");
    expect(server!.chatRequests).toHaveLength(2);
  });

  it("a connection cut mid-stream (TypeError: terminated under a 200) is retried", async () => {
    const started = streamedReply({ text: ["Your "] }) as { sse: object[] };
    const agent = await agentOn([
      { sse: started.sse.slice(0, 2), cut: true },
      streamedReply({ text: ["Shipped."] }),
    ]);
    const result = await appOf(agent).invoke(ask("hi"), config());
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Shipped.");
    expect(server!.chatRequests).toHaveLength(2);
  });

  it("a stream that ends cleanly before the provider's finish is retried, not kept", async () => {
    const full = streamedReply({ text: ["Your order ", "ships today."] }) as { sse: object[] };
    // The role chunk and the first text chunk, then the body ends: no finish_reason, no [DONE].
    const cut: FakeReply = { sse: full.sse.slice(0, 2), endWithDone: false };
    const agent = await agentOn([cut, streamedReply({ text: ["Your order ships today."] })]);
    const result = await appOf(agent).invoke(ask("status?"), config());
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Your order ships today.");
    expect(server!.chatRequests).toHaveLength(2);
  });

  it("a stream that always ends early fails with MODEL_005 saying so", async () => {
    const full = streamedReply({ text: ["Your order ", "ships today."] }) as { sse: object[] };
    const agent = await agentOn(() => ({ sse: full.sse.slice(0, 2), endWithDone: false }));
    const error = await failure(appOf(agent).invoke(ask("status?"), config()));
    expect(error.code).toBe("MODEL_005");
    expect(error.message).toContain("the stream ended before the provider's finish");
    expect(server!.chatRequests).toHaveLength(3);
  });

  it("a retry-after longer than retry.maxDelayMs fails at once with MODEL_005", async () => {
    const agent = await agentOn([rateLimited("120"), streamedReply({ text: ["never"] })]);
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_005");
    expect(error.statusCode).toBe(429);
    expect(error.message).toContain("asked to retry after 120 s, longer than retry.maxDelayMs");
    expect(error.message).toContain("Rate limit reached for gpt-4o-mini");
    expect(server!.chatRequests).toHaveLength(1);
  });

  it("a retry-after the node's deadline leaves no time for fails at once with MODEL_005", async () => {
    const agent = await agentOn([rateLimited("20"), streamedReply({ text: ["never"] })], {
      retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 60_000 },
    });
    const error = await failure(appOf(agent).invoke(ask("hi"), config({ nodeTimeout: 10 })));
    expect(error.code).toBe("MODEL_005");
    expect(error.message).toContain("the next wait would outlast the node's deadline");
    expect(server!.chatRequests).toHaveLength(1);
  });

  it("a stop during the backoff wait ends the run without another request", async () => {
    const agent = await agentOn([serverError(), streamedReply({ text: ["never"] })], {
      retry: { maxAttempts: 3, initialDelayMs: 600_000, maxDelayMs: 600_000 },
    });
    const app = appOf(agent);
    const cfg = config();
    const run = app.invoke(ask("hi"), cfg);
    await vi.waitFor(() => expect(server!.chatRequests).toHaveLength(1));
    await app.stop({ threadId: cfg.threadId! });
    expect((await run).status).toBe("stopped");
    expect(server!.chatRequests).toHaveLength(1);
  });

  it("a stop while the reply streams aborts the HTTP request and is not retried", async () => {
    const agent = await agentOn([
      streamedReply({ text: ["too late"] }, 60_000),
      streamedReply({ text: ["never"] }),
    ]);
    const app = appOf(agent);
    const cfg = config();
    const run = app.invoke(ask("hi"), cfg);
    await vi.waitFor(() => expect(server!.chatRequests).toHaveLength(1));
    await app.stop({ threadId: cfg.threadId! });
    expect((await run).status).toBe("stopped");
    await vi.waitFor(() => expect(server!.chatRequests[0]!.abandoned).toBe(true));
    expect(server!.chatRequests).toHaveLength(1);
  });
});

describe("Agent: hard failures fail the node with a coded error", () => {
  it("a 400 fails at once with MODEL_001 quoting the provider", async () => {
    const message = "Invalid value for 'temperature': must be between 0 and 2.";
    const agent = await agentOn([badRequest(message, "temperature")], { temperature: 7 });
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_001");
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe(
      `Model 'openai/gpt-4o-mini': the provider refused the request (HTTP 400): ${message}`,
    );
    expect(server!.chatRequests).toHaveLength(1);
  });

  it("a 429 insufficient_quota (out of credits) fails at once with MODEL_001", async () => {
    const agent = await agentOn([insufficientQuota(), streamedReply({ text: ["never"] })]);
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_001");
    expect(error.statusCode).toBe(429);
    expect(error.message).toContain("You exceeded your current quota");
    expect(server!.chatRequests).toHaveLength(1);
  });

  it("a 200 whose body is not a completion fails with MODEL_004, not retried", async () => {
    const agent = await agentOn([{ raw: "<html><body>Bad gateway</body></html>" }]);
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_004");
    expect(error.message).toContain("the response held no message");
    expect(server!.chatRequests).toHaveLength(1);
  });

  it("a malformed stream chunk fails with MODEL_004", async () => {
    const agent = await agentOn([
      { sse: ['{"id":"chatcmpl-1","choices":[{"delta":{"content":"Hi'] },
    ]);
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_004");
    expect(error.message).toContain("JSON parsing failed");
    expect(server!.chatRequests).toHaveLength(1);
  });

  it("a slow answer past requestTimeout fails with MODEL_002 and the request is aborted", async () => {
    const agent = await agentOn([streamedReply({ text: ["too late"] }, 60_000)], {
      requestTimeout: 0.2,
    });
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_002");
    expect(error.message).toContain("no complete reply within requestTimeout (0.2 s)");
    expect(server!.chatRequests).toHaveLength(1);
    await vi.waitFor(() => expect(server!.chatRequests[0]!.abandoned).toBe(true));
  });

  it("the node deadline still applies: NODE_TIMEOUT_001 and the request is aborted", async () => {
    const agent = await agentOn([streamedReply({ text: ["too late"] }, 60_000)]);
    const error = await failure(appOf(agent).invoke(ask("hi"), config({ nodeTimeout: 0.2 })));
    expect(error.code).toBe("NODE_TIMEOUT_001");
    await vi.waitFor(() => expect(server!.chatRequests[0]!.abandoned).toBe(true));
  });

  it("a missing API key fails with MODEL_003 naming the variable, before any request", async () => {
    vi.stubEnv("OPENAI_API_KEY", undefined);
    server = await FakeOpenAIServer.start([streamedReply({ text: ["never"] })]);
    const agent = new Agent({ model: "openai/gpt-4o-mini", provider: { baseURL: server.baseURL } });
    const error = await failure(appOf(agent).invoke(ask("hi"), config()));
    expect(error.code).toBe("MODEL_003");
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(server.chatRequests).toHaveLength(0);
  });
});
