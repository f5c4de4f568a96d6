import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "./support/fake-openai-server.js";
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
