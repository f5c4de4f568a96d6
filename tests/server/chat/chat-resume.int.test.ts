import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { afterAll, describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli-process.js";
import { caller, tokenFor } from "../support/http.js";
import { effects, startChatServer, writeChatProject } from "./support/chat-project.js";
import { NodeChat, textOf, toolStates, until } from "./support/node-chat.js";

/**
 * A fetch for the chat that sends each request to the current server (`target.base`) and can
 * cut the POST's stream as a network failure does: the client sees a `TypeError` as a browser
 * reports a lost connection, the server sees its client leave.
 */
function cuttableFetch(target: { base: string }) {
  const cuts: (() => void)[] = [];
  const cuttable = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input).replace(/^http:\/\/[^/]+/, target.base);
    const response = await fetch(url, init);
    if (init?.method !== "POST" || !response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        cuts.push(() => {
          controller.error(new TypeError("network error"));
          void reader.cancel();
        });
      },
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch {
          // Node's fetch says "terminated" when the server dies; a browser says "network error",
          // which is what the AI SDK's chat recognises as a disconnect it may resume after.
          controller.error(new TypeError("network error"));
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch: cuttable as typeof fetch, cut: () => cuts.splice(0).forEach((cut) => cut()) };
}

function runIdOf(message: UIMessage): string {
  const status = message.parts.find((p) => p.type === "data-run-status") as {
    data: { run_id?: string };
  };
  return status.data.run_id!;
}

const outputOf = (message: UIMessage, tool: string) =>
  message.parts.find((p) => p.type === `tool-${tool}`) as { state: string; output?: unknown };

describe("resumable chat streams", { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  const servers: CliProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop("SIGKILL");
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("reattaches a dropped client to the same run, which went on without it", async () => {
    const dir = writeChatProject("resume");
    dirs.push(dir);
    const { cli, base } = await startChatServer(dir);
    servers.push(cli);
    const alice = await tokenFor("alice");
    const wire = cuttableFetch({ base });
    const chat = new NodeChat(base, alice, { id: "chat-drop", fetch: wire.fetch });

    const sending = chat.sendMessage({ text: "charge order 501 slowly" });
    await until(
      () =>
        chat.messages.length === 2 &&
        outputOf(chat.reply, "charge_card")?.state === "output-available",
      "the charge",
    );
    const runBefore = runIdOf(chat.reply);
    wire.cut();
    await sending;
    expect(chat.status).toBe("error");
    expect(chat.errors.at(-1)?.message).toMatch(/network/);

    // The server carries on: the receipt waits for its gate, the run is still going.
    const state = await caller(base, alice)("GET", "/v1/threads/chat-drop/state");
    expect(state.body.data.state.execution_meta.internal_data.status).toBe("running");
    // A new message meanwhile is refused (409) and leaves the run alone.
    const busy = await caller(base, alice)("POST", "/v1/chat", {
      id: "chat-drop",
      trigger: "submit-message",
      messages: [{ id: "u-busy", role: "user", parts: [{ type: "text", text: "hello" }] }],
    });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe("THREAD_003");

    const resuming = chat.resumeStream();
    await until(() => chat.status === "streaming", "the resumed stream");
    writeFileSync(join(dir, "mail-gate"), "");
    await resuming;
    expect(chat.status).toBe("ready");
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(runIdOf(chat.reply)).toBe(runBefore);
    expect(toolStates(chat.reply)).toEqual([
      "lookup_order:output-available",
      "charge_card:output-available",
      "send_receipt:output-available",
    ]);
    expect(textOf(chat.reply)).toBe("All done for order 501: Receipt sent.");
    expect(effects(dir, /charged order 501/)).toHaveLength(1);
    expect(effects(dir, /receipt for order 501/)).toHaveLength(1);

    // Once the run and its keep-alive window are over there is nothing to reattach to.
    const late = await fetch(`${base}/v1/chat/unknown-chat/stream`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    expect(late.status).toBe(204);
  });

  it("continues a run whose server was SIGKILLed mid tool node on the next server: one charge", async () => {
    const dir = writeChatProject("crash");
    dirs.push(dir);
    const first = await startChatServer(dir);
    servers.push(first.cli);
    const alice = await tokenFor("alice");
    const target = { base: first.base };
    const wire = cuttableFetch(target);
    const chat = new NodeChat(first.base, alice, { id: "chat-crash", fetch: wire.fetch });

    const sending = chat.sendMessage({ text: "charge order 601 slowly" });
    await until(
      () =>
        chat.messages.length === 2 &&
        outputOf(chat.reply, "charge_card")?.state === "output-available",
      "the charge",
    );
    // Killed while send_receipt runs (claimed, not recorded): the page sees its stream break.
    await first.cli.stop("SIGKILL");
    await sending;
    expect(chat.status).toBe("error");
    expect(effects(dir, /charged order 601/)).toHaveLength(1);

    writeFileSync(join(dir, "mail-gate"), "");
    const second = await startChatServer(dir);
    servers.push(second.cli);
    target.base = second.base;
    await chat.resumeStream();
    expect(chat.errors.slice(1)).toEqual([]);
    expect(chat.status).toBe("ready");
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(chat.reply)).toBe("All done for order 601: Receipt sent.");
    const replayed = chat.reply.parts
      .filter((p) => p.type === "data-replayed-call")
      .map((p) => (p as { data: { tool_name: string } }).data.tool_name);
    expect(replayed.sort()).toEqual(["charge_card", "lookup_order"]);
    expect(outputOf(chat.reply, "charge_card")).toMatchObject({ output: "Charged 42 USD" });

    const charges = effects(dir, /charged order 601/);
    expect(charges).toHaveLength(1);
    expect(charges[0]!.pid).toBe(first.cli.child.pid);
    expect(effects(dir, /receipt for order 601/)).toHaveLength(1);
    const ledger = await caller(second.base, alice)("GET", "/v1/threads/chat-crash/ledger");
    const entries = ledger.body.data.entries as {
      tool_name: string;
      status: string;
      attempt: number;
    }[];
    expect(entries.map((e) => `${e.tool_name}:${e.status}`).sort()).toEqual([
      "charge_card:completed",
      "lookup_order:completed",
      "send_receipt:completed",
    ]);
    expect(entries.find((e) => e.tool_name === "charge_card")!.attempt).toBe(1);
  });

  it("asks a human about a call left in doubt by a killed server, as a tool approval: approving retries it", async () => {
    const dir = writeChatProject("in-doubt");
    dirs.push(dir);
    const first = await startChatServer(dir);
    servers.push(first.cli);
    const alice = await tokenFor("alice");
    const target = { base: first.base };
    const wire = cuttableFetch(target);
    const chat = new NodeChat(first.base, alice, {
      id: "chat-wire",
      fetch: wire.fetch,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });

    const sending = chat.sendMessage({ text: "wire order 701" });
    const ledger = () => caller(target.base, alice)("GET", "/v1/threads/chat-wire/ledger");
    await until(() => chat.messages.length === 2, "the reply");
    for (;;) {
      const entries = (await ledger()).body.data?.entries ?? [];
      if (entries.some((e: { status: string }) => e.status === "started")) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await first.cli.stop("SIGKILL");
    await sending;

    writeFileSync(join(dir, "wire-gate"), "");
    const second = await startChatServer(dir);
    servers.push(second.cli);
    target.base = second.base;
    await chat.resumeStream();
    const asked = chat.reply.parts.find((p) => p.type === "tool-wire_money") as {
      state: string;
      approval?: { id: string };
    };
    expect(asked.state).toBe("approval-requested");
    const question = chat.reply.parts.find((p) => p.type === "data-interrupt") as {
      data: { kind: string; decisions: string[]; value: { tool: string } };
    };
    expect(question.data).toMatchObject({
      kind: "in-doubt",
      decisions: ["retry", "complete", "fail"],
      value: { tool: "wire_money" },
    });
    expect(chat.reply.parts.some((p) => p.type === "data-in-doubt-call")).toBe(true);
    expect(effects(dir, /wired order 701/)).toHaveLength(0);

    await chat.addToolApprovalResponse({ id: asked.approval!.id, approved: true });
    await until(() => chat.status === "ready" && textOf(chat.reply) !== "", "the retried call");
    expect(outputOf(chat.reply, "wire_money")).toMatchObject({
      state: "output-available",
      output: "Wired 42 USD",
    });
    expect(textOf(chat.reply)).toBe("All done for order 701: Wired 42 USD.");
    expect(effects(dir, /wired order 701/)).toHaveLength(1);
  });
});
