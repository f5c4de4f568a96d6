import { rmSync } from "node:fs";
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli-process.js";
import { caller, tokenFor } from "../support/http.js";
import { effects, startChatServer, writeChatProject } from "./support/chat-project.js";
import { NodeChat, textOf, toolStates } from "./support/node-chat.js";

/** `tenxgraph api` in a child process, read by the AI SDK's own chat and stream parser. */
describe("POST /v1/chat with the AI SDK's useChat client", { timeout: 60_000 }, () => {
  const dir = writeChatProject("stream");
  let cli: CliProcess;
  let base: string;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    ({ cli, base } = await startChatServer(dir));
    alice = await tokenFor("alice");
    bob = await tokenFor("bob");
  }, 60_000);
  afterAll(async () => {
    await cli?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("streams text and reasoning deltas into one assistant message, under the protocol's header", async () => {
    const response = await fetch(`${base}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${alice}` },
      body: JSON.stringify({
        id: "chat-hello",
        trigger: "submit-message",
        messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] }],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await response.text();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const chunks = text
      .split("\n\n")
      .filter((f) => f.startsWith("data: {"))
      .map((f) => JSON.parse(f.slice(6)) as UIMessageChunk);
    const types = chunks.map((c) => c.type);
    expect(types[0]).toBe("start");
    expect(types).toContain("start-step");
    expect(types.filter((t) => t === "text-delta").length).toBeGreaterThan(3);
    expect(types.at(-1)).toBe("finish");
    expect(chunks.at(-1)).toMatchObject({ finishReason: "stop" });

    const stream = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream })) last = message;
    expect(last!.id).toBe("reply-u1");
    expect(textOf(last!)).toBe("Hello! Ask me to charge or refund an order.");
    const reasoning = last!.parts.find((p) => p.type === "reasoning");
    expect(reasoning).toMatchObject({ text: "The user said hello; I offer what I can do." });
    const status = last!.parts.find((p) => p.type === "data-run-status") as { data: object };
    expect(status.data).toMatchObject({ status: "completed" });
  });

  it("gives useChat tool parts with their inputs and outputs, one step per model reply", async () => {
    const chat = new NodeChat(base, alice, { id: "chat-charge" });
    await chat.sendMessage({ text: "please charge order 4821" });
    expect(chat.errors).toEqual([]);
    expect(chat.status).toBe("ready");
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const reply = chat.reply;
    expect(toolStates(reply)).toEqual([
      "lookup_order:output-available",
      "charge_card:output-available",
      "send_receipt:output-available",
    ]);
    const charge = reply.parts.find((p) => p.type === "tool-charge_card") as {
      toolCallId: string;
      input: unknown;
      output: unknown;
    };
    expect(charge).toMatchObject({
      toolCallId: "call_2",
      input: { order_id: "4821" },
      output: "Charged 42 USD",
    });
    expect(reply.parts.filter((p) => p.type === "step-start")).toHaveLength(2);
    expect(textOf(reply)).toBe("All done for order 4821: Receipt sent.");
    expect(effects(dir, /charged order 4821/)).toHaveLength(1);

    // The next turn sends only the new message: the thread already holds the rest.
    await chat.sendMessage({ text: "hello again" });
    const state = await caller(base, alice)("GET", "/v1/threads/chat-charge/messages");
    const roles = (state.body.data.messages as { role: string }[]).map((m) => m.role);
    expect(roles.filter((r) => r === "user")).toHaveLength(2);
    expect(textOf(chat.reply)).toBe("Hello! Ask me to charge or refund an order.");
  });

  it("refuses another user's chat, a malformed message and an unknown trigger, writing nothing", async () => {
    const post = (token: string, body: unknown) => caller(base, token)("POST", "/v1/chat", body);
    const hello = { id: "u9", role: "user", parts: [{ type: "text", text: "hello" }] };

    const bobs = await post(bob, {
      id: "chat-charge",
      trigger: "submit-message",
      messages: [hello],
    });
    expect(bobs.status).toBe(403);
    expect(bobs.body.error.code).toBe("PERMISSION_DENIED");
    const resume = await fetch(`${base}/v1/chat/chat-charge/stream`, {
      headers: { authorization: `Bearer ${bob}` },
    });
    expect(resume.status).toBe(403);

    const trigger = await post(alice, {
      id: "chat-bad",
      trigger: "edit-message",
      messages: [hello],
    });
    expect(trigger.status).toBe(422);
    expect(trigger.body.error).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(trigger.body.error.message).toMatch(/trigger/);

    const noParts = await post(alice, {
      id: "chat-bad",
      trigger: "submit-message",
      messages: [{ id: "u1", role: "user" }],
    });
    expect(noParts.status).toBe(422);
    expect(noParts.body.error.message).toMatch(/messages\.0\.parts/);

    const file = await post(alice, {
      id: "chat-bad",
      trigger: "submit-message",
      messages: [
        { id: "u1", role: "user", parts: [{ type: "file", url: "x", mediaType: "image/png" }] },
      ],
    });
    expect(file.status).toBe(422);
    expect(file.body.error.message).toMatch(/parts\[0\] is a "file" part/);

    const nothing = await post(alice, {
      id: "chat-bad",
      trigger: "submit-message",
      messages: [hello, { id: "a1", role: "assistant", parts: [] }],
    });
    expect(nothing.status).toBe(422);
    expect(nothing.body.error.code).toBe("CHAT_NOTHING_TO_RUN");

    const unauthenticated = await caller(base)("POST", "/v1/chat", {
      id: "chat-bad",
      trigger: "submit-message",
      messages: [hello],
    });
    expect(unauthenticated.status).toBe(401);
    const state = await caller(base, alice)("GET", "/v1/threads/chat-bad/state");
    expect(state.body.data.state).toBeNull();
  });
});
