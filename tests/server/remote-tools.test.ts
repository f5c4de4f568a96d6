import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { caller, isErrorEnvelope, ndjson, tokenFor, userMessage } from "./support/http.js";
import { remoteToolGraph } from "./support/remote-tool-graph.js";
import { startTestServer, type TestServer, type TestServerOptions } from "./support/test-server.js";

/** A tool result as 10xGraph's client sends it. */
function toolResult(callId: string, output: unknown, isError = false) {
  return {
    role: "tool",
    message_id: "0",
    content: [
      {
        type: "tool_result",
        call_id: callId,
        output,
        is_error: isError,
        status: isError ? "failed" : "completed",
      },
    ],
  };
}

/** The remote_tool_call blocks among wire messages. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function placeholders(messages: any[]) {
  return messages.flatMap((m) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    (m?.content ?? []).filter((b: any) => b.type === "remote_tool_call").map((b: any) => b),
  );
}

/** Over raw HTTP: contract §6, remote (client-side) tools. */
describe.each(STORES)("remote tools on $label", ({ kind }) => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await startTestServer(kind, `remote_tools_${kind}`, { auth: null, build: remoteToolGraph });
    call = caller(t.base);
  });
  afterAll(() => t.close());

  it("attaches tools with setup; refuses an unknown node, a node without tools, a taken name", async () => {
    const bad = [
      [{ node_name: "NOPE", name: "x" }, 404, "NODE_NOT_FOUND"],
      [{ node_name: "MAIN", name: "x" }, 422, "NOT_A_TOOL_NODE"],
      [{ node_name: "TOOL", name: "local_clock" }, 409, "REMOTE_TOOL_NAME_TAKEN"],
      [{ node_name: "TOOL", name: "has space" }, 422, "VALIDATION_ERROR"],
    ] as const;
    for (const [tool, status, code] of bad) {
      const r = await call("POST", "/v1/graph/setup", {
        tools: [{ node_name: "TOOL", name: "fine_one" }, tool],
      });
      expect(r.status, JSON.stringify(tool)).toBe(status);
      expect(r.body.error.code).toBe(code);
      expect(isErrorEnvelope(r.body)).toBe(true);
    }
    // A refused request attached nothing, not even its valid entry.
    const before = (await call("GET", "/v1/graph/tools")).body.data.nodes[0].tools;
    expect(before.map((x: { name: string }) => x.name)).toEqual(["local_clock"]);

    const r = await call("POST", "/v1/graph/setup", {
      tools: [
        {
          node_name: "TOOL",
          name: "get_location",
          description: "Where the user is.",
          parameters: { type: "object", properties: { n: { type: "integer" } } },
        },
        { node_name: "TOOL", name: "ask_user", description: "", parameters: {} },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: "success", success: true });
    expect(r.body.data.details).toBe("Added tools to nodes: ['TOOL']");
    const tools = (await call("GET", "/v1/graph/tools")).body.data.nodes[0].tools;
    expect(tools.map((x: { name: string; source: string }) => [x.name, x.source])).toEqual([
      ["local_clock", "local"],
      ["get_location", "remote"],
      ["ask_user", "remote"],
    ]);
    expect(tools[1].parameters.properties).toHaveProperty("n");
  });

  it("pauses on a remote call with a placeholder, resumes with the tool_result, never asks twice", async () => {
    const threadId = `remote-invoke-${kind}`;
    const config = { thread_id: threadId };
    const first = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("use local_clock, get_location")],
      config,
      response_granularity: "full",
    });
    expect(first.status).toBe(200);
    const { messages, meta, state } = first.body.data;
    expect(meta.status).toBe("interrupted");
    expect(messages.at(-1)).toMatchObject({
      role: "tool",
      metadata: { is_remote: true },
      content: [
        { type: "remote_tool_call", id: "call_2", name: "get_location", tool_type: "remote" },
      ],
    });
    expect(placeholders(messages)).toHaveLength(1);
    expect(placeholders(messages)[0].args).toEqual({ n: 2 });
    expect(state.execution_meta).toMatchObject({
      status: "interrupted_after",
      interrupt_reason: "remote_tool_call",
    });

    const second = await call("POST", "/v1/graph/invoke", {
      messages: [toolResult("call_2", { city: "Lyon" })],
      config,
    });
    expect(second.status).toBe(200);
    expect(second.body.data.meta.status).toBe("completed");
    expect(placeholders(second.body.data.messages)).toEqual([]);
    const last = second.body.data.messages.at(-1);
    expect(last.content[0].text).toBe('results: noon | {"city":"Lyon"}');
    const ledger = await t.graph.getToolLedger({ threadId });
    expect(ledger.map((e) => [e.toolName, e.status])).toEqual([
      ["local_clock", "completed"],
      ["get_location", "completed"],
    ]);

    // The same result again: the call is answered and recorded, so it is refused, unchanged.
    const before = await t.checkpointer.getCheckpoint(threadId);
    const again = await call("POST", "/v1/graph/invoke", {
      messages: [toolResult("call_2", { city: "Paris" })],
      config,
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("REMOTE_TOOL_NOT_PENDING");
    expect(await t.checkpointer.getCheckpoint(threadId)).toEqual(before);
  });

  it("streams each placeholder once at low granularity, and answers two calls in one request", async () => {
    const threadId = `remote-stream-${kind}`;
    const config = { thread_id: threadId };
    const first = await call("POST", "/v1/graph/stream", {
      messages: [userMessage("use ask_user, get_location")],
      config,
    });
    const chunks = ndjson(first.text);
    const asked = placeholders(chunks.map((c) => c.message));
    expect(asked.map((b: { name: string }) => b.name)).toEqual(["ask_user", "get_location"]);
    const carrying = chunks.filter((c) => placeholders([c.message]).length > 0);
    expect(carrying.every((c) => c.event === "message" && c.message.delta === false)).toBe(true);
    expect(carrying.every((c) => c.metadata.thread_id === threadId)).toBe(true);

    const second = await call("POST", "/v1/graph/stream", {
      messages: [toolResult("call_2", "Oslo"), toolResult("call_1", "denied", true)],
      config,
    });
    const lines = ndjson(second.text);
    expect(placeholders(lines.map((c) => c.message))).toEqual([]);
    const final = lines.filter((c) => c.event === "message" && c.message.role === "assistant");
    expect(final.at(-1).message.content[0].text).toBe("results: denied (failed) | Oslo");
    const ledger = await t.graph.getToolLedger({ threadId });
    expect(ledger.map((e) => e.status)).toEqual(["completed", "completed"]);
  });

  it("takes remote tools per run from config.remote_tools (OpenAI or flat), also on resume", async () => {
    const threadId = `remote-config-${kind}`;
    const remote_tools = [
      { type: "function", function: { name: "pick_color", description: "A color." } },
      { name: "pick_size", parameters: { type: "object" } },
    ];
    const first = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("use pick_color, pick_size")],
      config: { thread_id: threadId, remote_tools },
    });
    expect(placeholders(first.body.data.messages).map((b: { id: string }) => b.id)).toEqual([
      "call_1",
      "call_2",
    ]);
    // Without remote_tools this time: the calls waiting keep their tools.
    const second = await call("POST", "/v1/graph/invoke", {
      messages: [toolResult("call_1", "red"), toolResult("call_2", "XL")],
      config: { thread_id: threadId },
    });
    expect(second.body.data.meta.status).toBe("completed");
    expect(second.body.data.messages.at(-1).content[0].text).toBe("results: red | XL");

    const bad = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("use x")],
      config: { thread_id: `${threadId}-bad`, remote_tools: [{ description: "no name" }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("VALIDATION_ERROR");
  });
});

describe("remote tool setup on a server with auth or in production", () => {
  it("answers 403: tools then come per run only", async () => {
    const variants: TestServerOptions[] = [{}, { auth: null, app: { mode: "production" } }];
    for (const options of variants) {
      const t = await startTestServer("sqlite", "remote_setup_403", {
        ...options,
        build: remoteToolGraph,
      });
      try {
        const call = caller(t.base, await tokenFor("alice"));
        const r = await call("POST", "/v1/graph/setup", {
          tools: [{ node_name: "TOOL", name: "get_location", description: "", parameters: {} }],
        });
        expect(r.status).toBe(403);
        expect(r.body.error.code).toBe("PERMISSION_DENIED");
        expect(r.body.error.message).toContain("config.remote_tools");
        const run = await call("POST", "/v1/graph/invoke", {
          messages: [userMessage("use get_location")],
          config: { thread_id: "t1", remote_tools: [{ name: "get_location" }] },
        });
        expect(run.body.data.meta.status).toBe("interrupted");
      } finally {
        await t.close();
      }
    }
  });
});
