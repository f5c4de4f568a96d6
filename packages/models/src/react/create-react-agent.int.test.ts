import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryCheckpointer, Message, type AssistantMessage } from "@tenxgraph/core";
import { FaultPoints } from "@tenxgraph/core/testing";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";
import { recordingLogger } from "../support/graphs.js";
import { streamedReply } from "../support/openai-replies.js";
import {
  SUPPORT_ANSWER,
  SUPPORT_REQUEST,
  SUPPORT_THREAD,
  supportAgent,
  supportReplies,
} from "../support/support-agent.js";
import { REACT_AGENT_NODES, createReactAgent } from "./create-react-agent.js";

let server: FakeOpenAIServer | undefined;
const scratch: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const config = { threadId: SUPPORT_THREAD, toolTimeout: 30, nodeTimeout: 60 };
const input = { messages: [Message.user(SUPPORT_REQUEST)] };

/** The second request must carry the three results, answering the provider's call ids. */
function expectToolResultsSent(fake: FakeOpenAIServer) {
  const sent = fake.chatRequests[1]!.body.messages as { role: string; tool_call_id?: string }[];
  expect(sent.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual([
    "call_7Hq2",
    "call_8Rk5",
    "call_9Tm1",
  ]);
}

describe("createReactAgent: the support agent end to end over the wire", () => {
  it("runs MAIN and TOOL until the model stops calling tools", async () => {
    server = await FakeOpenAIServer.start(supportReplies());
    const outside: string[] = [];
    const app = supportAgent({
      baseURL: server.baseURL,
      checkpointer: new InMemoryCheckpointer(),
      outside: (line) => outside.push(line),
    });
    const result = await app.invoke(input, config);
    expect(result.status).toBe("completed");
    expect(result.state.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "tool",
      "assistant",
    ]);
    expect(Message.text(result.state.messages.at(-1)!)).toBe(SUPPORT_ANSWER);
    expect(outside).toEqual([
      "payment provider: charged order 4821 (key order-4821-charge)",
      "mailer: sent the receipt for order 4821",
    ]);
    expectToolResultsSent(server);
    expect(REACT_AGENT_NODES).toEqual({ model: "MAIN", tools: "TOOL" });
  });

  it("crash mid tool node, resume: the model is not asked again and charge_card runs once", async () => {
    server = await FakeOpenAIServer.start(supportReplies());
    const outside: string[] = [];
    const checkpointer = new InMemoryCheckpointer();
    const crash = new FaultPoints().arm(
      "ledger.after_record",
      () => {
        throw new Error("worker killed");
      },
      { when: (at) => at.toolName === "charge_card", times: 1 },
    );
    const first = supportAgent({
      baseURL: server.baseURL,
      checkpointer,
      outside: (line) => outside.push(line),
      faultPoints: crash,
      logger: recordingLogger(),
    });
    await expect(first.invoke(input, config)).rejects.toThrow("worker killed");
    expect(server.chatRequests).toHaveLength(1);
    expect((await first.getState(config))?.currentNode).toBe("TOOL");

    // A fresh app on the same store: its Agent has never seen this thread.
    const second = supportAgent({
      baseURL: server.baseURL,
      checkpointer,
      outside: (line) => outside.push(line),
    });
    const result = await second.invoke(null, config);
    expect(result.status).toBe("completed");
    expect(Message.text(result.state.messages.at(-1)!)).toBe(SUPPORT_ANSWER);
    expect(server.chatRequests).toHaveLength(2);
    expect(outside.filter((line) => line.startsWith("payment provider:"))).toEqual([
      "payment provider: charged order 4821 (key order-4821-charge)",
    ]);
    expect(outside.filter((line) => line.startsWith("mailer:"))).toHaveLength(1);
    expectToolResultsSent(server);
  });

  it("SIGKILL mid tool node on SQLite, resume in a fresh process: one model call per step, one charge", async () => {
    server = await FakeOpenAIServer.start(supportReplies());
    const dir = mkdtempSync(join(tmpdir(), "tenxgraph-models-"));
    scratch.push(dir);
    const dbPath = join(dir, "threads.db");
    const outsideLog = join(dir, "outside.log");
    const worker = fork(new URL("../support/support-agent-worker.ts", import.meta.url), [], {
      execArgv: ["--import", "tsx"],
      env: {
        ...process.env,
        TENXGRAPH_WORKER_PARAMS: JSON.stringify({ baseURL: server.baseURL, dbPath, outsideLog }),
      },
      stdio: ["ignore", "inherit", "pipe", "ipc"],
    });
    let stderr = "";
    worker.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = await new Promise<NodeJS.Signals | null>((resolve) =>
      worker.on("exit", (_code, signal) => resolve(signal)),
    );
    expect(exit, `the worker was to kill itself mid tool node; its stderr:\n${stderr}`).toBe(
      "SIGKILL",
    );
    expect(server.chatRequests).toHaveLength(1);

    const checkpointer = new SqliteCheckpointer({ path: dbPath });
    // send_receipt ran in parallel with the charge: it may or may not have been recorded.
    const resumedOutside: string[] = [];
    try {
      const app = supportAgent({
        baseURL: server.baseURL,
        checkpointer,
        outside: (line) => resumedOutside.push(line),
      });
      expect((await app.getState(config))?.currentNode).toBe("TOOL");
      const result = await app.invoke(null, config);
      expect(result.status).toBe("completed");
      expect(server.chatRequests).toHaveLength(2);
      const ledger = await app.getToolLedger(config);
      expect(ledger.find((e) => e.toolName === "charge_card")).toMatchObject({
        status: "completed",
        attempt: 1,
      });
      expect(ledger.map((e) => e.status)).toEqual(["completed", "completed", "completed"]);
    } finally {
      await checkpointer.close();
    }
    const lines = [...readFileSync(outsideLog, "utf8").trim().split("\n"), ...resumedOutside];
    expect(lines.filter((line) => line.startsWith("payment provider:"))).toEqual([
      "payment provider: charged order 4821 (key order-4821-charge)",
    ]);
    expect(resumedOutside.filter((line) => line.startsWith("payment provider:"))).toEqual([]);
    // A receipt sent but not yet recorded when the process died is in doubt and sent again
    // (at least once, by design); only what was recorded is never repeated.
    expect(lines.filter((line) => line.startsWith("mailer:")).length).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("passes the Agent's options and compile options through", async () => {
    server = await FakeOpenAIServer.start([streamedReply({ text: ["Hi."] })]);
    const logger = recordingLogger();
    const app = createReactAgent({
      model: "openai/gpt-4o-mini",
      provider: { baseURL: server.baseURL, apiKey: "sk-test" },
      tools: [],
      systemPrompt: "Be brief.",
      maxTokens: 64,
      compile: { logger },
    });
    const result = await app.invoke({ messages: [Message.user("hello")] }, { threadId: "t" });
    expect((result.state.messages.at(-1) as AssistantMessage).content).toBe("Hi.");
    expect(server.chatRequests[0]!.body).toMatchObject({
      max_tokens: 64,
      messages: [{ role: "system", content: "Be brief." }, { role: "user" }],
    });
    expect(server.chatRequests[0]!.body.tools).toBeUndefined();
    expect(() =>
      createReactAgent({ model: "openai/gpt-4o-mini", tools: "all" as unknown as [] }),
    ).toThrow("createReactAgent: tools must be an array");
  });
});
