import { rmSync } from "node:fs";
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli-process.js";
import { caller, tokenFor } from "../support/http.js";
import { effects, startChatServer, writeChatProject } from "./support/chat-project.js";
import { NodeChat, textOf, toolStates, until } from "./support/node-chat.js";

type ApprovalPart = { type: string; state: string; approval?: { id: string }; output?: unknown };

function refundPart(message: UIMessage): ApprovalPart {
  return message.parts.find((p) => p.type === "tool-refund_payment") as ApprovalPart;
}

/** A tool's `interrupt()` as the AI SDK's tool approval, answered through useChat's own calls. */
describe("interrupts as useChat tool approvals", { timeout: 60_000 }, () => {
  const dir = writeChatProject("approval");
  let cli: CliProcess;
  let base: string;
  let alice: string;

  beforeAll(async () => {
    ({ cli, base } = await startChatServer(dir));
    alice = await tokenFor("alice");
  }, 60_000);
  afterAll(async () => {
    await cli?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const chatFor = (id: string) =>
    new NodeChat(base, alice, {
      id,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });

  it("asks for approval, and the approval resumes the run by interrupt id: the refund runs once", async () => {
    const chat = chatFor("chat-refund");
    await chat.sendMessage({ text: "refund order 77" });
    expect(chat.errors).toEqual([]);
    const asked = refundPart(chat.reply);
    expect(asked).toMatchObject({ state: "approval-requested", input: { order_id: "77" } });
    const pending = await caller(base, alice)("GET", "/v1/threads/chat-refund/state");
    const [interrupt] = pending.body.data.state.execution_meta.internal_data.interrupts;
    expect(interrupt.toolCallId).toBe("call_1");
    expect(asked.approval!.id).toBe(interrupt.id);
    const question = chat.reply.parts.find((p) => p.type === "data-interrupt") as {
      data: { message: string; value: unknown };
    };
    expect(question.data).toMatchObject({
      message: "Refund this order?",
      value: { order_id: "77", amount_cents: 4200 },
    });
    expect(effects(dir, /refunded order 77/)).toHaveLength(0);

    await chat.addToolApprovalResponse({ id: asked.approval!.id, approved: true });
    await until(() => chat.status === "ready" && textOf(chat.reply) !== "", "the resumed run");
    expect(chat.errors).toEqual([]);
    // The run carried on in the same assistant message.
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(refundPart(chat.reply)).toMatchObject({
      state: "output-available",
      output: "Refunded 42 USD",
    });
    expect(textOf(chat.reply)).toBe("All done for order 77: Refunded 42 USD.");
    expect(effects(dir, /refunded order 77/)).toHaveLength(1);
  });

  it("passes a denial and its reason to the tool, which refunds nothing", async () => {
    const chat = chatFor("chat-deny");
    await chat.sendMessage({ text: "refund order 78" });
    const asked = refundPart(chat.reply);
    await chat.addToolApprovalResponse({
      id: asked.approval!.id,
      approved: false,
      reason: "too late",
    });
    await until(() => chat.status === "ready" && textOf(chat.reply) !== "", "the resumed run");
    expect(toolStates(chat.reply)).toEqual(["refund_payment:output-available"]);
    expect(refundPart(chat.reply).output).toBe("Refund declined: too late");
    expect(effects(dir, /refunded order 78/)).toHaveLength(0);
  });

  it("refuses an answer to an interrupt the thread does not wait for (422), writing nothing", async () => {
    const chat = chatFor("chat-stale");
    await chat.sendMessage({ text: "refund order 79" });
    const reply = structuredClone(chat.reply);
    const part = refundPart(reply) as ApprovalPart & { approval: object };
    Object.assign(part, {
      state: "approval-responded",
      approval: { id: "not-asked", approved: true },
    });
    const before = await caller(base, alice)("GET", "/v1/threads/chat-stale/state");
    const answer = await caller(base, alice)("POST", "/v1/chat", {
      id: "chat-stale",
      trigger: "submit-message",
      messages: [chat.messages[0], reply],
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe("CHAT_NOTHING_TO_RUN");
    const after = await caller(base, alice)("GET", "/v1/threads/chat-stale/state");
    const version = (a: typeof before) => a.body.data.state.execution_meta.internal_data.version;
    expect(version(after)).toBe(version(before));
    expect(after.body.data.state.execution_meta.internal_data.status).toBe("interrupted");
  });
});
