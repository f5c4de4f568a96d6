import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { tokenFor, userMessage } from "./support/http.js";
import { remoteToolGraph } from "./support/remote-tool-graph.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A socket to `/v1/graph/ws` that keeps every frame and how it closed. */
class Socket {
  readonly frames: any[] = [];
  readonly ws: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
  #waiters: (() => void)[] = [];

  constructor(url: string, protocols?: string[]) {
    this.ws = new WebSocket(url, protocols);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
    });
    this.closed = new Promise((resolve) =>
      this.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    this.ws.on("message", (data) => {
      this.frames.push(JSON.parse(data.toString()));
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** Waits for the next frame that `match`es, after those already seen at index `from`. */
  async next(match: (frame: any) => boolean, from = 0): Promise<any> {
    for (;;) {
      const found = this.frames.slice(from).find(match);
      if (found) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** The frames of one run: everything up to its `done`, from index `from`. */
  async run(from: number): Promise<any[]> {
    const done = await this.next((f) => f.event === "updates" && f.data?.status === "done", from);
    return this.frames.slice(from, this.frames.indexOf(done) + 1);
  }
}

describe.each(STORES)("WS /v1/graph/ws on $label", ({ kind }) => {
  let t: TestServer;
  let ws: string;
  let alice: string;
  beforeAll(async () => {
    t = await startTestServer(kind, `websocket_${kind}`, {
      build: remoteToolGraph,
      app: { maxSockets: 3 },
    });
    ws = t.base.replace("http://", "ws://") + "/v1/graph/ws";
    alice = await tokenFor("alice");
  });
  afterAll(() => t.close());

  it("runs frames with the token as subprotocol, streams chunks, ends each run with done", async () => {
    const s = new Socket(ws, ["agentflow-bearer", alice]);
    await s.opened;
    expect(s.ws.protocol).toBe("agentflow-bearer");
    const threadId = `ws-${kind}`;
    s.send({ messages: [userMessage("use local_clock")], config: { thread_id: threadId } });
    const first = await s.run(0);
    expect(first.at(-1)).toMatchObject({ event: "updates", data: { status: "done" } });
    expect(first.every((f) => f.thread_id === threadId && f.metadata.thread_id === threadId)).toBe(
      true,
    );
    expect(first[0]).toMatchObject({ event: "message", message: { role: "user" } });
    const replies = first.filter((f) => f.event === "message" && f.message.role === "assistant");
    expect(replies.at(-1).message.content[0].text).toBe("results: noon");

    // The remote-tool loop over the socket: a placeholder, then invoke_type "resume".
    const remote = `ws-remote-${kind}`;
    const config = { thread_id: remote, remote_tools: [{ name: "get_location" }] };
    s.send({ messages: [userMessage("use get_location")], config });
    const paused = await s.run(first.length);
    const placeholder = paused.find((f) => f.message?.content?.[0]?.type === "remote_tool_call");
    expect(placeholder.message.content[0]).toMatchObject({ id: "call_1", name: "get_location" });
    expect(paused).toContainEqual(
      expect.objectContaining({
        event: "updates",
        data: expect.objectContaining({ reason: "Remote tool call - graph interrupted" }),
      }),
    );
    const at = s.frames.length;
    s.send({
      invoke_type: "resume",
      tool_result: [
        {
          role: "tool",
          message_id: "0",
          content: [
            { type: "tool_result", call_id: "call_1", output: "Rome", status: "completed" },
          ],
        },
      ],
      config,
    });
    const resumed = await s.run(at);
    const last = resumed.filter((f) => f.event === "message" && f.message.role === "assistant");
    expect(last.at(-1).message.content[0].text).toBe("results: Rome");
    s.ws.close(1000);
    expect((await s.closed).code).toBe(1000);
  });

  it("answers a bad frame with an error chunk and stays open; takes ?token=", async () => {
    const s = new Socket(`${ws}?token=${alice}`);
    await s.opened;
    s.send("not json");
    const bad = await s.next((f) => f.event === "error");
    expect(bad.data.reason).toMatch(/^Invalid request: not JSON/);
    s.send({ invoke_type: "resume", tool_result: [] });
    const bad2 = await s.next((f) => f.event === "error", 1);
    expect(bad2.data.reason).toMatch(/tool_result/);
    s.send({ messages: [userMessage("use local_clock")], config: { thread_id: `ws-q-${kind}` } });
    const run = await s.run(2);
    expect(run.at(-1)).toMatchObject({ data: { status: "done" } });
    s.ws.close();
    await s.closed;
  });

  it("closes with 1008 for a missing or bad token, and for another user's thread", async () => {
    for (const protocols of [undefined, ["agentflow-bearer", "forged.token.here"]]) {
      const s = new Socket(ws, protocols);
      const closed = await s.closed;
      expect(closed.code).toBe(1008);
      expect(closed.reason).toMatch(/token/i);
    }
    const bob = new Socket(ws, ["agentflow-bearer", await tokenFor("bob")]);
    await bob.opened;
    bob.send({ messages: [userMessage("use local_clock")], config: { thread_id: `ws-${kind}` } });
    const refused = await bob.next((f) => f.event === "error");
    expect(refused.data.code).toBe("PERMISSION_DENIED");
    expect((await bob.closed).code).toBe(1008);
    const messages = await t.checkpointer.listMessages(`ws-${kind}`);
    expect(messages.every((m) => !JSON.stringify(m).includes("bob"))).toBe(true);
  });

  it("closes connections over websocket.max_connections with 1013", async () => {
    const open = [1, 2, 3].map(() => new Socket(ws, ["agentflow-bearer", alice]));
    await Promise.all(open.map((s) => s.opened));
    const extra = new Socket(ws, ["agentflow-bearer", alice]);
    expect((await extra.closed).code).toBe(1013);
    for (const s of open) s.ws.close();
    await Promise.all(open.map((s) => s.closed));
  });
});
