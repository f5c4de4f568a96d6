import {
  Message,
  StateGraph,
  END,
  silentLogger,
  type BaseState,
  type CompiledGraph,
} from "@tenxgraph/core";
import { WebSocket } from "ws";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** Bytes of the reply each run writes: several runs' output outgrows the socket's bound. */
const REPLY_BYTES = 2 * 1024 * 1024;

/** Opens a socket as alice and resolves once it is open. */
async function open(base: string, token: string): Promise<WebSocket> {
  const ws = new WebSocket(base.replace("http://", "ws://") + "/v1/graph/ws", [
    "agentflow-bearer",
    token,
  ]);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  return ws;
}

function closeOf(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.once("close", (code) => resolve(code)));
}

/**
 * Issue 27, item 12: one socket cannot make the server hold unbounded data. A frame larger than
 * a request body closes it with 1009; frames sent faster than they run, or output its client
 * does not read, close it with 1008 while what the server holds stays within fixed bounds.
 */
describe("WS /v1/graph/ws limits", () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer("sqlite", "websocket_limits", {
      build: (checkpointer) =>
        new StateGraph()
          .addNode("BIG", () => Message.assistant("y".repeat(REPLY_BYTES)))
          .addEdge("BIG", END)
          .setEntryPoint("BIG")
          .compile({ checkpointer, logger: silentLogger }) as unknown as CompiledGraph<BaseState>,
      app: { maxBodyBytes: 64 * 1024, logger: silentLogger },
    });
    token = await tokenFor("alice");
  });
  afterAll(() => t.close());
  // Peaks are the server's whole life: each test reads its own.
  beforeEach(() => {
    const peaks = t.server.app.context.socketPeaks;
    if (peaks) Object.assign(peaks, { queuedFrames: 0, queuedBytes: 0, bufferedBytes: 0 });
  });

  it("closes with 1009 on a frame larger than a request body may be", async () => {
    const ws = await open(t.base, token);
    const closed = closeOf(ws);
    ws.send(JSON.stringify({ messages: [userMessage("x".repeat(100 * 1024))] }));
    expect(await closed).toBe(1009);
  });

  it("closes with 1008 a client that sends frames without reading, holding bounded frames and output", async () => {
    const ws = await open(t.base, token);
    const closed = closeOf(ws);
    // The client reads nothing while it sends: its answers pile up on the server's side.
    ws.pause();
    const frame = JSON.stringify({
      messages: [userMessage("hi")],
      config: { thread_id: "flood" },
      response_granularity: "full",
    });
    for (let i = 0; i < 200; i++) ws.send(frame);
    ws.resume();
    expect(await closed).toBe(1008);
    const peaks = t.server.app.context.socketPeaks;
    expect(peaks.queuedFrames).toBeLessThanOrEqual(8);
    expect(peaks.queuedBytes).toBeLessThanOrEqual(64 * 1024);
    // Output past 4 MiB closes the socket; one chunk more may sit on top of it.
    expect(peaks.bufferedBytes).toBeLessThanOrEqual(4 * 1024 * 1024 + 4 * REPLY_BYTES);
    // Far fewer runs than frames sent: the rest were never queued.
    const runs = (await t.checkpointer.getCheckpoint("flood"))?.version ?? 0;
    expect(runs).toBeLessThan(200);
  });

  it("closes with 1008 a client that never reads a run's output once it passes the bound", async () => {
    const ws = await open(t.base, token);
    const closed = closeOf(ws);
    ws.pause();
    // One frame at a time (within the queue's bound), each run's output unread.
    for (let i = 0; i < 8; i++)
      ws.send(
        JSON.stringify({
          messages: [userMessage("hi")],
          config: { thread_id: "unread" },
          response_granularity: "full",
        }),
      );
    ws.resume();
    expect(await closed).toBe(1008);
    // It was the output that closed it: more than 4 MiB waited for the client, and no more.
    const peaks = t.server.app.context.socketPeaks;
    expect(peaks.queuedFrames).toBeLessThanOrEqual(8);
    expect(peaks.bufferedBytes).toBeGreaterThan(4 * 1024 * 1024);
    expect(peaks.bufferedBytes).toBeLessThanOrEqual(4 * 1024 * 1024 + 4 * REPLY_BYTES);
  });
});
