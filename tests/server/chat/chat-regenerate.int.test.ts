import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli-process.js";
import { caller, tokenFor } from "../support/http.js";
import { effects, startChatServer, writeChatProject } from "./support/chat-project.js";
import { NodeChat, textOf, toolStates } from "./support/node-chat.js";

/** useChat's regenerate(): a fork from the version that added the user's message. */
describe("regenerating a chat reply", { timeout: 60_000 }, () => {
  const dir = writeChatProject("regenerate");
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

  it("asks the model again from before its reply: calls with a domain key replay, the others run again", async () => {
    const chat = new NodeChat(base, alice, { id: "chat-again" });
    await chat.sendMessage({ text: "charge order 4822" });
    const first = chat.reply;
    expect(textOf(first)).toBe("All done for order 4822: Receipt sent.");
    const call = caller(base, alice);
    const before = (await call("GET", "/v1/threads/chat-again/messages")).body.data.messages;

    await chat.regenerate({ messageId: first.id });
    expect(chat.errors).toEqual([]);
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const again = chat.reply;
    expect(textOf(again)).toBe("All done for order 4822: Receipt sent.");
    expect(toolStates(again)).toEqual([
      "lookup_order:output-available",
      "charge_card:output-available",
      "send_receipt:output-available",
    ]);
    // charge_card's domain key names the payment in every branch: it replays, charging once.
    const replayed = again.parts
      .filter((p) => p.type === "data-replayed-call")
      .map((p) => (p as { data: { tool_name: string } }).data.tool_name);
    expect(replayed).toEqual(["charge_card"]);
    expect(effects(dir, /charged order 4822/)).toHaveLength(1);
    expect(effects(dir, /receipt for order 4822/)).toHaveLength(2);

    // The thread's transcript is the fork's: the user's message once, then the new reply.
    const after = (await call("GET", "/v1/threads/chat-again/messages")).body.data.messages;
    expect(after.filter((m: { role: string }) => m.role === "user")).toHaveLength(1);
    expect(after).toHaveLength(before.length);
    expect(after[0].message_id).toBe(before[0].message_id);
    expect(after.at(-1).message_id).not.toBe(before.at(-1).message_id);
    // The fork's first version has the version that added the user's message as its parent; the
    // branch left behind stays readable with the first reply.
    type Version = { version: number; parent_version: number | null; node: string | null };
    const history: Version[] = (await call("GET", "/v1/threads/chat-again/history")).body.data
      .history;
    const [latest, ...older] = history;
    const forkStart = history.find((v) => v.node === null && v.parent_version !== null)!;
    expect(forkStart.parent_version).toBe(1);
    const left = older.find((v) => v.version < forkStart.version)!;
    const old = await call("GET", `/v1/threads/chat-again/state?version=${left.version}`);
    const oldIds = old.body.data.state.context.map((m: { message_id: string }) => m.message_id);
    expect(oldIds).toContain(before.at(-1).message_id);
    expect(latest!.version).toBeGreaterThan(forkStart.version);
  });

  it("refuses to regenerate the reply to a message the thread does not have (422), writing nothing", async () => {
    const answer = await caller(base, alice)("POST", "/v1/chat", {
      id: "chat-again",
      trigger: "regenerate-message",
      messages: [{ id: "never-sent", role: "user", parts: [{ type: "text", text: "hello" }] }],
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe("CHAT_MESSAGE_NOT_FOUND");
  });

  it("edits a user message: the run forks from where it was added, with the new text in its place", async () => {
    const chat = new NodeChat(base, alice, { id: "chat-edit" });
    await chat.sendMessage({ text: "hello" });
    await chat.sendMessage({ text: "charge order 4830" });
    const edited = chat.messages[2]!;
    expect(edited.role).toBe("user");

    await chat.sendMessage({ text: "charge order 4831", messageId: edited.id });
    expect(chat.errors).toEqual([]);
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(textOf(chat.reply)).toBe("All done for order 4831: Receipt sent.");
    const messages = (await caller(base, alice)("GET", "/v1/threads/chat-edit/messages")).body.data
      .messages as { role: string; message_id: string; content: { text: string }[] }[];
    const users = messages.filter((m) => m.role === "user");
    expect(users.map((m) => m.content[0]!.text)).toEqual(["hello", "charge order 4831"]);
    expect(users[1]!.message_id).toBe(edited.id);
    expect(messages.at(-1)!.content[0]!.text).toBe("All done for order 4831: Receipt sent.");
    expect(messages).toHaveLength(2 + 1 + 5);
    expect(effects(dir, /charged order 4830/)).toHaveLength(1);
    expect(effects(dir, /charged order 4831/)).toHaveLength(1);
  });
});
