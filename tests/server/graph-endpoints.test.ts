import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { caller, isErrorEnvelope, ndjson, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** Over real HTTP on 127.0.0.1, on each store: health, graph info, invoke, stream, stop. */
describe.each(STORES)("graph endpoints on $label", ({ kind }) => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await startTestServer(kind, `graph_endpoints_${kind}`);
    call = caller(t.base, await tokenFor("alice"));
  });
  afterAll(() => t.close());

  it("answers ping, the graph, its tools, its state schema and the OpenAPI document", async () => {
    const ping = await call("GET", "/ping");
    expect(ping.status).toBe(200);
    expect(ping.body.data).toBe("pong");
    expect(ping.headers.get("x-request-id")).toBe(ping.body.metadata.request_id);

    const graph = (await call("GET", "/v1/graph")).body.data;
    expect(graph.nodes.map((n: { name: string }) => n.name)).toEqual([
      "__start__",
      "MAIN",
      "TOOL",
      "__end__",
    ]);
    const edges = graph.edges.map(
      (e: { source: string; target: string }) => `${e.source}>${e.target}`,
    );
    expect(edges).toEqual(
      expect.arrayContaining(["__start__>MAIN", "TOOL>MAIN", "MAIN>TOOL", "MAIN>__end__"]),
    );
    expect(graph.info).toMatchObject({ node_count: 4, checkpointer: true, is_realtime: false });

    const tools = (await call("GET", "/v1/graph/tools")).body.data;
    expect(tools.nodes[0].tools.map((x: { name: string }) => x.name)).toEqual([
      "lookup_order",
      "charge_card",
      "send_receipt",
    ]);
    expect(tools.nodes[0].tools[1].parameters.properties).toHaveProperty("amount_cents");

    const schema = (await call("GET", "/v1/graph:StateSchema")).body.data;
    expect(Object.keys(schema.properties)).toEqual([
      "context",
      "context_summary",
      "execution_meta",
    ]);

    const openapi = (await call("GET", "/openapi.json")).body;
    expect(openapi.openapi).toBe("3.1.0");
    const invoke =
      openapi.paths["/v1/graph/invoke"].post.requestBody.content["application/json"].schema;
    expect(invoke.properties.recursion_limit).toMatchObject({ minimum: 1, maximum: 100 });
  });

  it("invokes on a new thread: a minted thread id and message ids, the whole turn, the ledger", async () => {
    const r = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 4821")],
      config: { thread_id: "0" },
      response_granularity: "full",
    });
    expect(r.status).toBe(200);
    const { messages, meta, state } = r.body.data;
    expect(meta.is_new_thread).toBe(true);
    expect(meta.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.status).toBe("completed");
    expect(messages.map((m: { role: string }) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "tool",
      "assistant",
    ]);
    expect(messages[0].message_id).not.toBe("0");
    expect(
      messages[1].tools_calls.map((c: { function: { name: string } }) => c.function.name),
    ).toEqual(["lookup_order", "charge_card", "send_receipt"]);
    expect(messages.at(-1).content[0].text).toBe(
      "Order 4821 is charged and the receipt is on its way.",
    );
    expect(state.execution_meta).toMatchObject({ status: "completed", thread_id: meta.thread_id });
    expect(state.context).toHaveLength(6);
    expect(t.count(/charged order 4821/)).toBe(1);

    const ledger = await call("GET", `/v1/threads/${meta.thread_id}/ledger`);
    const entries = ledger.body.data.entries.map(
      (e: { tool_name: string; status: string }) => `${e.tool_name}:${e.status}`,
    );
    expect(entries.sort()).toEqual([
      "charge_card:completed",
      "lookup_order:completed",
      "send_receipt:completed",
    ]);
    expect((await call("GET", `/v1/threads/${meta.thread_id}/in-doubt`)).body.data.calls).toEqual(
      [],
    );

    // The same order again on the same thread: the domain key replays the charge.
    const again = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 4821 again")],
      config: { thread_id: meta.thread_id },
      response_granularity: "low",
    });
    expect(again.body.data.meta.is_new_thread).toBe(false);
    expect(again.body.data).not.toHaveProperty("state");
    expect(t.count(/charged order 4821/)).toBe(1);
  });

  it("streams NDJSON by default, every chunk naming the thread; SSE when the request asks for it", async () => {
    const threadId = `stream-${kind}`;
    const r = await call(
      "POST",
      "/v1/graph/stream",
      {
        messages: [userMessage("charge order 7")],
        config: { thread_id: threadId },
        response_granularity: "full",
      },
      { accept: "application/x-ndjson, application/json" },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const chunks = ndjson(r.text);
    expect(
      chunks.every((c) => c.metadata.thread_id === threadId && c.metadata.is_new_thread === true),
    ).toBe(true);
    expect(chunks[0]).toMatchObject({
      event: "message",
      message: { role: "user" },
      metadata: { status: "invoking_graph" },
    });
    const statuses = chunks.filter((c) => c.event === "updates").map((c) => c.data.status);
    expect(statuses).toEqual(
      expect.arrayContaining(["node_invoked", "tool_started", "tool_completed"]),
    );
    expect(statuses.at(-1)).toBe("graph_invoked");
    const finals = chunks.filter(
      (c) => c.event === "message" && c.message.role === "assistant" && !c.message.delta,
    );
    expect(finals.at(-1).message.content[0].text).toBe(
      "Order 7 is charged and the receipt is on its way.",
    );

    const low = await call("POST", "/v1/graph/stream", {
      messages: [userMessage("charge order 7")],
      config: { thread_id: threadId },
    });
    expect(new Set(ndjson(low.text).map((c) => c.event))).toEqual(new Set(["message"]));
    expect(t.count(/charged order 7\b/)).toBe(1);

    const sse = await call(
      "POST",
      "/v1/graph/stream",
      { messages: [userMessage("hello")], config: { thread_id: threadId } },
      { accept: "text/event-stream" },
    );
    expect(sse.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = sse.text.split("\n\n").filter(Boolean);
    expect(events.length).toBeGreaterThan(1);
    for (const event of events) expect(event).toMatch(/^event: (message|error)\ndata: \{.*\}$/);
  });

  it("answers fix and observability for an owned thread without changing it", async () => {
    const before = await t.checkpointer.getCheckpoint(`stream-${kind}`);
    const fix = await call("POST", "/v1/graph/fix", { thread_id: `stream-${kind}` });
    expect(fix.body.data).toMatchObject({ success: false, removed_count: 0, state: null });
    const traces = await call("GET", `/v1/observability/stream-${kind}`);
    expect(traces.body.data).toEqual({
      thread_id: `stream-${kind}`,
      run_count: 0,
      run_ids: [],
      run: null,
    });
    expect(await t.checkpointer.getCheckpoint(`stream-${kind}`)).toEqual(before);
  });

  it("refuses bad runs before answering: empty messages 422, resume on an idle thread 422", async () => {
    const empty = await call("POST", "/v1/graph/invoke", { messages: [] });
    expect(empty.status).toBe(422);
    expect(isErrorEnvelope(empty.body)).toBe(true);
    expect(empty.body.error.details[0].loc).toEqual(["body", "messages"]);
    const limit = await call("POST", "/v1/graph/stream", {
      messages: [userMessage("x")],
      recursion_limit: 101,
    });
    expect(limit.status).toBe(422);
    const resume = await call("POST", "/v1/graph/stream", {
      resume: "yes",
      config: { thread_id: `stream-${kind}` },
    });
    expect(resume.status).toBe(422);
    expect(resume.body.error.code).toBe("RESUME_003");
  });

  it("stops a running run through /v1/graph/stop; an idle thread reports not running", async () => {
    const gate = join(t.dir, "never-opened");
    const gated = await startTestServer(kind, `graph_stop_${kind}`, { gateFile: gate });
    try {
      const as = caller(gated.base, await tokenFor("alice"));
      const running = as("POST", "/v1/graph/invoke", {
        messages: [userMessage("charge order 9")],
        config: { thread_id: "s1" },
      });
      // The model waits at the gate; the thread says running once the run's first write is in.
      while (
        (await as("GET", "/v1/threads/s1/state")).body.data.state?.execution_meta.status !==
        "running"
      ) {
        await sleep(20);
      }
      const stop = await as("POST", "/v1/graph/stop", { thread_id: "s1" });
      expect(stop.body.data).toMatchObject({
        ok: true,
        running: true,
        status: "stop_requested",
        thread_id: "s1",
      });
      const result = await running;
      expect(result.body.data.meta.status).toBe("stopped");
      const idle = await as("POST", "/v1/graph/stop", { thread_id: "s1" });
      expect(idle.body.data).toMatchObject({ ok: true, running: false, reason: "not-running" });
      const none = await as("POST", "/v1/graph/stop", { thread_id: "nope" });
      expect(none.body.data).toMatchObject({ ok: false, reason: "no-state" });
      writeFileSync(gate, "");
      const continued = await as("POST", "/v1/graph/invoke", {
        continue: true,
        config: { thread_id: "s1" },
      });
      expect(continued.body.data.meta.status).toBe("completed");
      expect(gated.count(/charged order 9/)).toBe(1);
    } finally {
      await gated.close();
    }
  });
});
