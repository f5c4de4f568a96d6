import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import {
  InMemoryCheckpointer,
  Message,
  isTenxgraphError,
  type MessagesChunk,
} from "@tenxgraph/core";
import { createReactAgent } from "@tenxgraph/models";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { langchainInput } from "../messages/langchain-input.js";
import {
  SUPPORT_ANSWER,
  SUPPORT_REQUEST,
  SUPPORT_THREAD,
  supportAgent,
  supportChatModel,
} from "../support/support-agent.js";
import { TurnByTurnChatModel, textTurn } from "../support/turn-by-turn-chat-model.js";
import { langchainModel } from "./langchain-model.js";

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const config = { threadId: SUPPORT_THREAD, toolTimeout: 30, nodeTimeout: 60 };

/** A provider's error as LangChain's provider packages throw it: an HTTP status on the error. */
function httpError(status: number, message: string): Error {
  return Object.assign(new Error(message), { status });
}

describe("langchainModel: a LangChain chat model as the model node", () => {
  it("runs the ReAct loop with bound tools, streams tokens, and sends the tool results back", async () => {
    const chatModel = supportChatModel();
    const outside: string[] = [];
    const app = supportAgent({
      chatModel,
      checkpointer: new InMemoryCheckpointer(),
      outside: (line) => outside.push(line),
    });
    const deltas: string[] = [];
    const input = langchainInput({ messages: [new HumanMessage(SUPPORT_REQUEST)] });
    for await (const chunk of app.stream(input, { ...config, streamMode: "messages" })) {
      const [part] = chunk as MessagesChunk;
      if (part.type === "message_delta") deltas.push(part.delta);
    }
    const state = (await app.getState(config))!.values;
    expect(state.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "tool",
      "assistant",
    ]);
    expect(Message.text(state.messages.at(-1)!)).toBe(SUPPORT_ANSWER);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(SUPPORT_ANSWER);
    expect(state.messages[1]!.toolCalls?.map((c) => c.id)).toEqual([
      "call_7Hq2",
      "call_8Rk5",
      "call_9Tm1",
    ]);
    expect(
      chatModel.boundTools.map((t) => (t as { function: { name: string } }).function.name),
    ).toEqual(["lookup_order", "charge_card", "send_receipt"]);
    const second = chatModel.requests[1]!;
    expect(second.filter(ToolMessage.isInstance).map((m) => m.tool_call_id)).toEqual([
      "call_7Hq2",
      "call_8Rk5",
      "call_9Tm1",
    ]);
    expect(outside.filter((line) => line.startsWith("payment provider:"))).toHaveLength(1);
  });

  it("works with LangChain's FakeListChatModel and no tools", async () => {
    const app = createReactAgent({
      model: langchainModel(new FakeListChatModel({ responses: ["Hello there."] })),
      tools: [],
    });
    const result = await app.invoke(
      langchainInput({ messages: [{ type: "human", content: "hi" }] }),
      {
        threadId: "t",
      },
    );
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Hello there.");
    // Given as it is, a LangChain message is refused with a pointer to the converter.
    const raw = { messages: [new HumanMessage("hi")] } as unknown as { messages: Message[] };
    await expect(app.invoke(raw, { threadId: "t2" })).rejects.toThrow(/langchainInput/);
  });

  it("retries a transient failure (HTTP 503) by the Agent's policy, and fails a refusal (401) at once", async () => {
    const flaky = new TurnByTurnChatModel([httpError(503, "overloaded"), textTurn("Back.")]);
    const app = createReactAgent({
      model: langchainModel(flaky),
      tools: [],
      retry: { initialDelayMs: 1, maxDelayMs: 5 },
    });
    const result = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Back.");
    expect(flaky.requests).toHaveLength(2);

    const refused = new TurnByTurnChatModel([httpError(401, "bad key"), textTurn("never")]);
    const failing = createReactAgent({ model: langchainModel(refused), tools: [] });
    const error = await failing.invoke({ messages: [Message.user("hi")] }, { threadId: "t" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTenxgraphError(error, "MODEL_001"), String(error)).toBe(true);
    expect(refused.requests).toHaveLength(1);
  });

  it("SIGKILL mid tool node on SQLite, resume in a fresh process: one model call per step, one charge", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tenxgraph-langchain-"));
    scratch.push(dir);
    const dbPath = join(dir, "threads.db");
    const outsideLog = join(dir, "outside.log");
    const worker = fork(new URL("../support/support-agent-worker.ts", import.meta.url), [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, TENXGRAPH_WORKER_PARAMS: JSON.stringify({ dbPath, outsideLog }) },
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

    const checkpointer = new SqliteCheckpointer({ path: dbPath });
    const resumedOutside: string[] = [];
    // The resumed process's model starts at the answer: the tool-call turn was answered and
    // persisted before the crash, so asking again for it would be a second model call.
    const resumedModel = new TurnByTurnChatModel([textTurn(SUPPORT_ANSWER)]);
    try {
      const app = supportAgent({
        chatModel: resumedModel,
        checkpointer,
        outside: (line) => resumedOutside.push(line),
      });
      expect((await app.getState(config))?.currentNode).toBe("TOOL");
      const result = await app.invoke(null, config);
      expect(result.status).toBe("completed");
      expect(resumedModel.requests).toHaveLength(1);
      const ledger = await app.getToolLedger(config);
      expect(ledger.find((e) => e.toolName === "charge_card")).toMatchObject({
        status: "completed",
        attempt: 1,
      });
    } finally {
      await checkpointer.close();
    }
    const lines = [...readFileSync(outsideLog, "utf8").trim().split("\n"), ...resumedOutside];
    expect(lines.filter((line) => line.startsWith("payment provider:"))).toEqual([
      "payment provider: charged order 4821 (key order-4821-charge)",
    ]);
    expect(resumedOutside.filter((line) => line.startsWith("payment provider:"))).toEqual([]);
  }, 60_000);
});
