import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "./support/fake-openai-server.js";
import { streamedReply } from "./support/openai-replies.js";
import { supportReplies } from "./support/support-agent.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const tsx = fileURLToPath(new URL("node_modules/.bin/tsx", `file://${root}`));
const example = "examples/models/support-agent-live.ts";

/** Runs the example with the given environment, without any real provider key. */
function runExample(env: Record<string, string>, file = example) {
  const { OPENAI_API_KEY: _o, ANTHROPIC_API_KEY: _a, OPENAI_BASE_URL: _b, ...base } = process.env;
  return promisify(execFile)(tsx, [file], {
    cwd: root,
    env: { ...base, ...env },
    timeout: 60_000,
  });
}

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("npm run example:models", () => {
  it("runs the scripted model without keys and without network: crash, resume, one charge", async () => {
    const { stdout } = await runExample({});
    expect(stdout).toContain("model: scripted");
    expect(stdout).toContain("crashed: worker killed");
    expect(stdout).toContain("charge_card (replayed from the ledger)");
    expect(stdout).toContain("status: completed");
    expect(stdout).toContain(
      "outside world: payment provider: charged order 4821 (key order-4821-charge)\n" +
        "outside world: mailer: sent the receipt for order 4821\n",
    );
  }, 60_000);

  it("with OPENAI_API_KEY runs the Agent on gpt-4o-mini: two requests, tokens, one charge", async () => {
    server = await FakeOpenAIServer.start(supportReplies());
    const { stdout } = await runExample({
      OPENAI_API_KEY: "sk-test",
      // The OpenAI provider reads its base URL from here: the fake server stands in for the API.
      OPENAI_BASE_URL: server.baseURL,
    });
    expect(stdout).toContain("model: openai/gpt-4o-mini");
    expect(stdout).toContain("model asks for: lookup_order, charge_card, send_receipt");
    expect(stdout).toContain('tokens: {"inputTokens":182,"outputTokens":71,"totalTokens":253}');
    expect(stdout).toContain("crashed: worker killed");
    expect(stdout).toContain("Order 4821 is charged and the receipt is on its way.");
    expect(stdout).toContain(
      "outside world: payment provider: charged order 4821 (key order-4821-charge)\n" +
        "outside world: mailer: sent the receipt for order 4821\n",
    );
    // The crash did not make the model answer its first step again.
    expect(server.chatRequests).toHaveLength(2);
    expect(server.chatRequests[0]!.body.model).toBe("gpt-4o-mini");
  }, 60_000);
});

describe("npm run example:supervisor", () => {
  it("hands off to two workers at once, then to a writer whose approval is answered through the supervisor", async () => {
    const { stdout } = await runExample({}, "examples/supervisor.ts");
    expect(stdout).toContain(
      'status: interrupted; asked: writer|MODEL:2 "Publish \\"a note on kelp\\"?"',
    );
    expect(stdout).toContain("status: completed");
    expect(stdout).toContain("assistant [transfer_to_researcher, transfer_to_pricer]");
    expect(stdout).toContain("assistant Done: writer: a note on kelp");
    // Each worker's tool ran once: the writer's call replayed from its ledger on the resume.
    expect(stdout).toContain(
      "outside world: researcher looked up kelp; pricer looked up kelp; writer looked up kelp\n",
    );
  }, 60_000);
});

describe("examples/langgraph-port/react-structured: LangGraph.js's structured output how-to, ported", () => {
  it("runs as published on a scripted OpenAI server: tools, answer, then the structured response", async () => {
    const weatherCall = (id: string) =>
      streamedReply({
        toolCalls: [{ id, name: "get_weather", argumentChunks: ['{"city":', '"nyc"}'] }],
      });
    server = await FakeOpenAIServer.start([
      weatherCall("call_Wx1"),
      streamedReply({ text: ["It might be ", "cloudy in NYC."] }),
      streamedReply({ text: ['{"conditions":', '"cloudy"}'] }),
      weatherCall("call_Wx2"),
      streamedReply({ text: ["It might be cloudy in NYC."] }),
      streamedReply({ text: ['{"conditions":"CLOUDY"}'] }),
    ]);
    const { stdout } = await runExample(
      { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.baseURL },
      "examples/langgraph-port/react-structured/agent.ts",
    );
    expect(stdout).toBe("{ conditions: 'cloudy' }\n{ conditions: 'CLOUDY' }\n");
    const bodies = server.chatRequests.map((request) => request.body);
    expect(bodies.map((body) => body.model)).toEqual(Array(6).fill("gpt-4o"));
    // The third request of each agent asks for the schema in JSON mode, without the tools.
    for (const body of [bodies[2]!, bodies[5]!]) {
      expect(body.tools).toBeUndefined();
      expect(body.response_format).toMatchObject({
        type: "json_schema",
        json_schema: { schema: { properties: { conditions: { type: "string" } } } },
      });
    }
    // The tool ran: its result went back to the model.
    const sent = bodies[1]!.messages as { role: string; content: unknown }[];
    expect(sent.at(-1)).toMatchObject({ role: "tool", content: "It might be cloudy in nyc" });
    // responseFormat's prompt is the system prompt of the structured request only.
    expect((bodies[5]!.messages as { role: string }[])[0]).toEqual({
      role: "system",
      content: "Always return capitalized weather conditions",
    });
    expect((bodies[3]!.messages as { role: string }[])[0]!.role).toBe("user");
  }, 60_000);
});

describe("examples/langgraph-port/swarm: LangGraph.js's swarm quickstart, ported", () => {
  it("runs as published on a scripted OpenAI server: Alice hands to Bob, Bob back to Alice, who adds", async () => {
    const call = (id: string, name: string, args: string) =>
      streamedReply({ toolCalls: [{ id, name, argumentChunks: [args] }] });
    server = await FakeOpenAIServer.start([
      call("call_h1", "transfer_to_bob", "{}"),
      streamedReply({ text: ["Ahoy, Bob here!"] }),
      call("call_h2", "transfer_to_alice", "{}"),
      call("call_a1", "add", '{"a":5,"b":7}'),
      streamedReply({ text: ["5 + 7 is 12."] }),
    ]);
    const { stdout } = await runExample(
      { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.baseURL },
      "examples/langgraph-port/swarm/agent.ts",
    );
    expect(stdout).toBe("Ahoy, Bob here!\n5 + 7 is 12.\n");
    const bodies = server.chatRequests.map((request) => request.body);
    const systems = bodies.map((body) => (body.messages as { content: unknown }[])[0]!.content);
    // Alice, Bob; next turn straight to Bob (the active agent), then Alice twice.
    expect(systems.map((text) => String(text).split(",")[0])).toEqual([
      "You are Alice",
      "You are Bob",
      "You are Bob",
      "You are Alice",
      "You are Alice",
    ]);
    const sent = bodies[4]!.messages as { role: string; content: unknown }[];
    expect(sent.at(-1)).toMatchObject({ role: "tool", content: "12" });
  }, 60_000);
});
