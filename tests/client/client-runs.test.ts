import { setTimeout as sleep } from "node:timers/promises";
import {
  ConflictError,
  ValidationError,
  isClientError,
  messageText,
  type StreamChunk,
  type TenxgraphClient,
} from "@tenxgraph/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_CASES, startClientServer, type ClientTestServer } from "./support/client-server.js";

/** Waits (no deadline of its own: vitest's test timeout is the limit) until `check` holds. */
async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await sleep(20);
}

/** The client against the real server on 127.0.0.1, on each store: runs and their control. */
describe.each(CLIENT_CASES)("client runs on $label", ({ kind, transport }) => {
  let t: ClientTestServer;
  let client: TenxgraphClient;
  const status = async (threadId: string) =>
    (await client.getState(threadId))?.execution_meta.internal_data.status;
  beforeAll(async () => {
    t = await startClientServer(kind, `client_runs_${kind}`, { transport });
    client = await t.clientFor("alice");
  });
  afterAll(() => t.close());

  it("pings, describes the graph and invokes a new thread, then the same thread again", async () => {
    expect(await client.ping()).toBe("pong");
    const graph = await client.getGraph();
    expect(graph.nodes.map((n) => n.name)).toEqual(["__start__", "MAIN", "TOOL", "__end__"]);
    const tools = await client.getGraphTools();
    expect(tools.nodes[0]!.tools.map((x) => x.name)).toEqual(["charge_card", "approve_refund"]);
    expect((await client.getOpenApi()).openapi).toBe("3.1.0");

    const first = await client.invoke("hello", { granularity: "full" });
    expect(first.meta).toMatchObject({ is_new_thread: true, status: "completed" });
    expect(first.messages.map((m) => [m.role, messageText(m)])).toEqual([
      ["user", "hello"],
      ["assistant", "Echo: hello"],
    ]);
    expect(first.state?.execution_meta.thread_id).toBe(first.meta.thread_id);

    const again = await client.invoke("charge 5", { threadId: first.meta.thread_id });
    expect(again.meta.is_new_thread).toBe(false);
    expect(messageText(again.messages.at(-1)!)).toBe("Done: Charged order 5");
    expect(t.charges).toEqual(["5"]);
  });

  it("streams NDJSON chunks that all name the thread, ending with the run's last message", async () => {
    const chunks: StreamChunk[] = [];
    for await (const chunk of client.stream("charge 6", {
      threadId: `stream-${kind}`,
      granularity: "full",
    }))
      chunks.push(chunk);
    expect(chunks.every((c) => c.metadata.thread_id === `stream-${kind}`)).toBe(true);
    expect(chunks[0]).toMatchObject({ event: "message", message: { role: "user" } });
    const updates = chunks.filter((c) => c.event === "updates").map((c) => c.data?.status);
    expect(updates).toEqual(expect.arrayContaining(["node_invoked", "tool_completed"]));
    expect(updates.at(-1)).toBe("graph_invoked");
    const finals = chunks.filter((c) => c.event === "message" && !c.message?.delta);
    expect(messageText(finals.at(-1)!.message!)).toBe("Done: Charged order 6");
  });

  it("closes the connection when the loop is left: the server stops the run, which continues later", async () => {
    const threadId = `break-${kind}`;
    t.gate.close();
    const seen: StreamChunk[] = [];
    for await (const chunk of client.stream("charge 7", { threadId })) {
      seen.push(chunk);
      if (chunk.message?.delta) break; // the model is waiting at the gate, sending tokens
    }
    // Only a closed connection stops this run: the gate stays shut until the run is over.
    await until(async () => (await status(threadId)) !== "running");
    t.gate.open();
    expect(await status(threadId)).toBe("stopped");
    expect(t.charges).not.toContain("7");
    const continued = await client.continueRun(threadId);
    expect(continued.meta.status).toBe("completed");
    expect(t.charges.filter((c) => c === "7")).toHaveLength(1);
  });

  it("rejects with the signal's reason when a stream or an invoke is aborted", async () => {
    t.gate.close();
    const controller = new AbortController();
    const reason = new Error("user left");
    const stream = client.stream("hold on", {
      threadId: `abort-${kind}`,
      signal: controller.signal,
    });
    const error = await (async () => {
      for await (const chunk of stream) if (chunk.message?.delta) controller.abort(reason);
    })().catch((e: unknown) => e);
    expect(error).toBe(reason);
    await until(async () => (await status(`abort-${kind}`)) !== "running");
    t.gate.open();

    const early = new AbortController();
    early.abort(reason);
    await expect(client.invoke("x", { signal: early.signal })).rejects.toBe(reason);
  });

  it("pauses on two interrupts and resumes each by id; without an id it is a 422 RESUME_001", async () => {
    const threadId = `approve-${kind}`;
    const paused = await client.invoke("approve ann bob", { threadId });
    expect(paused.meta.status).toBe("interrupted");
    const [ann, bob] = paused.meta.interrupts;
    expect([ann!.value, bob!.value]).toEqual([
      { question: "Refund ann?" },
      { question: "Refund bob?" },
    ]);

    const ambiguous = await client.resume(threadId, "yes").catch((e: unknown) => e);
    expect(ambiguous).toBeInstanceOf(ValidationError);
    expect(isClientError(ambiguous, "RESUME_001")).toBe(true);
    expect((ambiguous as ValidationError).requestId).toMatch(/.+/);

    const one = await client.resume(threadId, { ok: true }, { interruptId: bob!.id });
    expect(one.meta.status).toBe("interrupted");
    expect(one.meta.interrupts.map((i) => i.id)).toEqual([ann!.id]);
    const two = await client.resume(threadId, { ok: false }, { interruptId: ann!.id });
    expect(two.meta.status).toBe("completed");
    expect(messageText(two.messages.at(-1)!)).toBe('Done: ann: {"ok":false}; bob: {"ok":true}');
  });

  it("stops a running run from another request", async () => {
    const threadId = `stop-${kind}`;
    t.gate.close();
    const running = client.invoke("charge 8", { threadId });
    await until(async () => t.gate.waiting > 0 && (await status(threadId)) === "running");
    const stop = await client.stop(threadId);
    expect(stop).toMatchObject({ ok: true, running: true, status: "stop_requested" });
    expect((await running).meta.status).toBe("stopped");
    t.gate.open();
    expect(await client.stop(threadId)).toMatchObject({ running: false, reason: "not-running" });
    expect(t.charges).not.toContain("8");
  });

  it("answers a write that raced a run with 409 STORAGE_CONFLICT_001", async () => {
    const threadId = `conflict-${kind}`;
    t.gate.close();
    const running = client.invoke("charge 9", { threadId }).catch((e: unknown) => e);
    await until(async () => t.gate.waiting > 0 && (await status(threadId)) === "running");
    // A state edit commits while the run holds its version: the run's next write is stale.
    await client.updateState(threadId, { note: "edited mid-run" });
    t.gate.open();
    const error = await running;
    expect(error).toBeInstanceOf(ConflictError);
    expect(isClientError(error, "STORAGE_CONFLICT_001")).toBe(true);
    expect((error as ConflictError).isStaleState).toBe(true);
    expect((error as ConflictError).status).toBe(409);
    expect(t.charges).not.toContain("9");
  });
});
