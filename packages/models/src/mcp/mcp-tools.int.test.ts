import { Message, type AnyTool, type BaseState, type ToolMessage } from "@tenxgraph/core";
import { FaultPoints, supportAgent, type ScriptedTurn } from "@tenxgraph/core/testing";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Agent } from "../agent/agent.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";
import { recordingLogger } from "../support/graphs.js";
import { connectInMemory, startCrmMcp, type CrmMcp } from "../support/mcp-server.js";
import { streamedReply } from "../support/openai-replies.js";
import { MCP_IDEMPOTENCY_KEY_META, mcpTools } from "./mcp-tools.js";

let crm: CrmMcp;
let server: FakeOpenAIServer | undefined;
beforeEach(async () => {
  crm = await startCrmMcp();
});
afterEach(async () => {
  await crm.close();
  await server?.close();
  server = undefined;
});

function appWith(tools: AnyTool[], turns: ScriptedTurn[], faults?: FaultPoints) {
  return supportAgent<BaseState>({
    model: turns,
    tools,
    logger: recordingLogger(),
    ...(faults && { faultPoints: faults }),
  });
}

const ask = { messages: [Message.user("help customer 118")] };
const toolMessages = (messages: Message[]) =>
  messages.filter((m): m is ToolMessage => m.role === "tool");

describe("mcpTools: an MCP server's tools as tenxgraph tools", () => {
  it("lists the tools with valid names, the server's descriptions and its exact schemas", async () => {
    const tools = await mcpTools(crm.client);
    const listed = (await crm.client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual([
      "crm_find_customer", // '.' is not allowed in a tool name
      "refund_payment",
      "sales_chart",
      "wait_for_approval",
    ]);
    expect(tools[0]!.description).toBe("Find a customer by email.");
    tools.forEach((t, i) => expect(t.jsonSchema()).toEqual(listed[i]!.inputSchema));
    expect(tools.every((t) => t.onInDoubt === "retry")).toBe(true);
  });

  it("takes a prefix, a filter and an in-doubt policy chosen from the annotations", async () => {
    const tools = await mcpTools(crm.client, {
      prefix: "crm_",
      filter: (info) => info.name !== "wait_for_approval",
      onInDoubt: (info) => (info.annotations?.idempotentHint ? "retry" : "fail"),
      timeout: 5,
    });
    expect(tools.map((t) => [t.name, t.onInDoubt, t.timeout])).toEqual([
      ["crm_crm_find_customer", "retry", 5],
      ["crm_refund_payment", "fail", 5],
      ["crm_sales_chart", "fail", 5],
    ]);
  });

  it("runs calls through a ToolNode: results, ledger records, idempotency key in _meta", async () => {
    const tools = await mcpTools(crm.client);
    const app = appWith(tools, [
      {
        toolCalls: [
          { name: "crm_find_customer", args: { email: "ada@example.com" } },
          { name: "refund_payment", args: { payment_id: "pay_77", amount_cents: 1500 } },
          { name: "sales_chart", args: {} },
        ],
      },
      "Refunded.",
    ]);
    const result = await app.invoke(ask, { threadId: "mcp-1" });
    const [customer, refund, chart] = toolMessages(result.state.messages);
    expect(customer!.content).toBe("Customer 118 <ada@example.com>");
    expect(refund!.content).toBe("Refunded 1500 cents");
    expect(chart!.content).toEqual([
      { type: "text", text: "Sales, last 7 days" },
      { type: "image", data: expect.any(String), mediaType: "image/png" },
    ]);
    const ledger = await app.getToolLedger({ threadId: "mcp-1" });
    expect(ledger.map((e) => [e.toolName, e.status])).toEqual([
      ["crm_find_customer", "completed"],
      ["refund_payment", "completed"],
      ["sales_chart", "completed"],
    ]);
    expect(crm.calls.map((c) => c.meta?.[MCP_IDEMPOTENCY_KEY_META])).toEqual(
      ledger.map((e) => e.key),
    );
  });

  it("replays a recorded call after a crash instead of calling the server again", async () => {
    const tools = await mcpTools(crm.client);
    let writesAtMain = 0;
    const crash = new FaultPoints().arm(
      // Before the tool step's write (the second write at MAIN; the first is the start), which
      // carries the call's result: the failed run's last write records it instead.
      "step.before_write",
      () => {
        throw new Error("worker killed");
      },
      { when: (at) => at.node === "MAIN" && ++writesAtMain === 2, times: 1 },
    );
    const app = appWith(
      tools,
      [
        {
          toolCalls: [{ name: "refund_payment", args: { payment_id: "pay_9", amount_cents: 700 } }],
        },
        "Done.",
      ],
      crash,
    );
    await expect(app.invoke(ask, { threadId: "mcp-2" })).rejects.toThrow("worker killed");
    const result = await app.invoke(null, { threadId: "mcp-2" });
    expect(result.status).toBe("completed");
    expect(toolMessages(result.state.messages)[0]!.content).toBe("Refunded 700 cents");
    expect(crm.calls.filter((c) => c.tool === "refund_payment")).toHaveLength(1);
  });

  it("refuses arguments that fail the server's schema before calling it", async () => {
    const app = appWith(await mcpTools(crm.client), [
      { toolCalls: [{ name: "refund_payment", args: { payment_id: "pay_1", amount_cents: -5 } }] },
      "Sorry.",
    ]);
    const result = await app.invoke(ask, { threadId: "mcp-3" });
    const [message] = toolMessages(result.state.messages);
    expect(message!.isError).toBe(true);
    expect(Message.text(message!)).toContain("[TOOL_ARGS_001]");
    expect(Message.text(message!)).toContain("amount_cents");
    expect(crm.calls).toEqual([]);
  });

  it("does not refuse arguments the server's own schema accepts (a unicode pattern)", async () => {
    const names: string[] = [];
    const mcp = new McpServer({ name: "names", version: "1.0.0" });
    mcp.registerTool(
      "greet",
      { description: "Greet a person.", inputSchema: { name: z.string().regex(/^\p{L}+$/u) } },
      async (args) => {
        names.push(args.name);
        return { content: [{ type: "text", text: `Hello ${args.name}` }] };
      },
    );
    const greeter = await connectInMemory(mcp);
    try {
      const app = appWith(await mcpTools(greeter.client), [
        { toolCalls: [{ name: "greet", args: { name: "José" } }] },
        "Done.",
      ]);
      const result = await app.invoke(ask, { threadId: "mcp-unicode" });
      expect(Message.text(toolMessages(result.state.messages)[0]!)).toBe("Hello José");
      expect(names).toEqual(["José"]);
    } finally {
      await greeter.close();
    }
  });

  it("turns an MCP error result into a TOOL_ERROR_001 message", async () => {
    const app = appWith(await mcpTools(crm.client), [
      { toolCalls: [{ name: "refund_payment", args: { payment_id: "missing", amount_cents: 1 } }] },
      "Sorry.",
    ]);
    const result = await app.invoke(ask, { threadId: "mcp-4" });
    expect(Message.text(toolMessages(result.state.messages)[0]!)).toBe(
      "Tool 'refund_payment' failed: [TOOL_ERROR_001] No payment 'missing'",
    );
  });

  it("a tool timeout cancels the MCP request (NODE_TIMEOUT_002)", async () => {
    const app = appWith(await mcpTools(crm.client, { timeout: 0.2 }), [
      { toolCalls: [{ name: "wait_for_approval", args: { ticket: "T-5" } }] },
      "Still waiting.",
    ]);
    const result = await app.invoke(ask, { threadId: "mcp-5" });
    expect(Message.text(toolMessages(result.state.messages)[0]!)).toContain("[NODE_TIMEOUT_002]");
    await vi.waitFor(() => expect(crm.cancelled).toEqual(["T-5"]));
  });

  it("an Agent sends the server's schemas to the model as they are", async () => {
    server = await FakeOpenAIServer.start([streamedReply({ text: ["Hi."] })]);
    const tools = await mcpTools(crm.client);
    const agent = new Agent({
      model: "openai/gpt-4o-mini",
      provider: { baseURL: server.baseURL, apiKey: "sk-test" },
      tools,
    });
    await supportAgent<BaseState>({ model: agent, tools, logger: recordingLogger() }).invoke(ask, {
      threadId: "mcp-6",
    });
    const sent = server.chatRequests[0]!.body.tools as {
      function: { name: string; parameters: unknown };
    }[];
    const listed = (await crm.client.listTools()).tools;
    expect(sent.map((t) => t.function.parameters)).toEqual(
      listed.map(({ inputSchema: { $schema: _dialect, ...schema } }) => schema),
    );
  });
});
