import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket } from "ws";
import { z } from "zod";
import {
  END,
  Message,
  StateGraph,
  ToolNode,
  silentLogger,
  tool,
  type BaseState,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { caller, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** What the slow tool saw, shared with the test (the server runs in this process). */
const seen = { slow: true, started: 0, aborted: 0, finished: 0 };

/** MAIN asks for `wait_for_mail` once; the tool waits (sending nothing) while `seen.slow`. */
function slowToolGraph(checkpointer: Checkpointer) {
  const waitForMail = tool({
    name: "wait_for_mail",
    description: "Waits for the mail server.",
    schema: z.object({}),
    async execute(_args, ctx) {
      seen.started++;
      try {
        while (seen.slow) await sleep(20, undefined, { signal: ctx.signal });
      } catch (error) {
        seen.aborted++;
        throw error;
      }
      seen.finished++;
      return "mail sent";
    },
  });
  const model = (state: BaseState) =>
    state.messages.at(-1)?.role === "tool"
      ? Message.assistant(`done: ${Message.text(state.messages.at(-1)!)}`)
      : Message.assistant("", [{ id: "call_1", name: "wait_for_mail", arguments: "{}" }]);
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([waitForMail]))
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger, stopPollIntervalMs: 250 }) as never;
}

/** Over real HTTP: a client that leaves a stream while the run is silent stops the run. */
describe.each(STORES)("a stream whose client disconnects, on $label", ({ kind }) => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    Object.assign(seen, { slow: true, started: 0, aborted: 0, finished: 0 });
    t = await startTestServer(kind, `stream_disconnect_${kind}`, { build: slowToolGraph });
    token = await tokenFor("alice");
  });
  afterAll(() => t.close());

  it("aborts the run while a slow tool sends nothing; the thread is stopped and continues later", async () => {
    const threadId = `leave-${kind}`;
    const controller = new AbortController();
    const response = await fetch(`${t.base}/v1/graph/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        messages: [userMessage("mail it")],
        config: { thread_id: threadId },
        response_granularity: "full",
      }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    // Read until the tool has started; from then on the run sends nothing until it ends.
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes('"tool_started"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before the tool started: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();

    // Every run the server holds ends: without the disconnect reaching the run, this waits for
    // a tool that never finishes (and the test times out).
    while (t.server.app.context.activeRuns.size > 0)
      await Promise.allSettled([...t.server.app.context.activeRuns]);
    expect(seen).toMatchObject({ started: 1, aborted: 1, finished: 0 });
    const stopped = await t.checkpointer.getCheckpoint(threadId);
    expect(stopped).toMatchObject({ status: "stopped", currentNode: "TOOL", userId: "alice" });
    const kept = await t.checkpointer.listMessages(threadId);
    expect(kept.map((m) => m.role)).toEqual(["user", "assistant"]);

    // The thread is consistent: continuing it runs the call once more and finishes the turn.
    seen.slow = false;
    const call = caller(t.base, token);
    const continued = await call("POST", "/v1/graph/invoke", {
      continue: true,
      config: { thread_id: threadId },
    });
    expect(continued.status).toBe(200);
    expect(continued.body.data.meta.status).toBe("completed");
    expect(seen).toMatchObject({ started: 2, finished: 1 });
    const all = await t.checkpointer.listMessages(threadId);
    expect(all.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(Message.text(all.at(-1)!)).toBe("done: mail sent");
    const ledger = await t.graph.getToolLedger({ threadId });
    expect(ledger.map((e) => e.status)).toEqual(["completed"]);
  });

  it("aborts the run when its WebSocket closes mid-tool", async () => {
    Object.assign(seen, { slow: true, started: 0, aborted: 0, finished: 0 });
    const threadId = `leave-ws-${kind}`;
    const ws = new WebSocket(`${t.base.replace("http", "ws")}/v1/graph/ws`, [
      "agentflow-bearer",
      token,
    ]);
    const toolStarted = new Promise<void>((resolve) =>
      ws.on("message", (data) => {
        if (String(data).includes('"tool_started"')) resolve();
      }),
    );
    await new Promise((resolve) => ws.once("open", resolve));
    ws.send(
      JSON.stringify({
        messages: [userMessage("mail it")],
        config: { thread_id: threadId },
        response_granularity: "full",
      }),
    );
    await toolStarted;
    ws.close();
    while (t.server.app.context.activeRuns.size > 0)
      await Promise.allSettled([...t.server.app.context.activeRuns]);
    expect(seen).toMatchObject({ started: 1, aborted: 1, finished: 0 });
    expect(await t.checkpointer.getCheckpoint(threadId)).toMatchObject({ status: "stopped" });
  });
});
