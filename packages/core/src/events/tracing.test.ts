import { SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { Message } from "../messages/message.js";
import { supportAgent } from "../testing/support-agent.js";
import { supportTools } from "../testing/support-agent.js";
import { spanTree, testTracer } from "../support/test-tracer.js";

const TWO_CALLS = [
  {
    toolCalls: [
      { name: "lookup_order", args: { order_id: "4821" } },
      { name: "charge_card", args: { order_id: "4821", amount_cents: 4200 } },
    ],
  },
  "Order 4821 is charged.",
];

describe("spans", () => {
  it("a two-tool turn: a run span, a span per step, a span per tool call", async () => {
    const { tracer, spans, span } = testTracer();
    const app = supportAgent({
      model: TWO_CALLS,
      tools: supportTools(),
      tracing: { tracer, name: "support" },
    });
    const result = await app.invoke({ messages: [Message.user("charge 4821")] }, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(spanTree(spans())).toBe(
      [
        `invoke_agent support  {gen_ai.operation.name="invoke_agent", gen_ai.agent.name="support", tenxgraph.graph="support", tenxgraph.run.mode="new", tenxgraph.run.status="completed"}`,
        `  step MAIN  {tenxgraph.node="MAIN", tenxgraph.step=0, tenxgraph.step.version=2, tenxgraph.step.durable=true}`,
        `  step TOOL  {tenxgraph.node="TOOL", tenxgraph.step=1, tenxgraph.step.version=3, tenxgraph.step.durable=true}`,
        `    execute_tool lookup_order  {gen_ai.operation.name="execute_tool", gen_ai.tool.name="lookup_order", gen_ai.tool.type="function", tenxgraph.tool.policy="retry", tenxgraph.tool.idempotency_key=false, tenxgraph.tool.attempt=1, tenxgraph.tool.outcome="ran"}`,
        `    execute_tool charge_card  {gen_ai.operation.name="execute_tool", gen_ai.tool.name="charge_card", gen_ai.tool.type="function", tenxgraph.tool.policy="retry", tenxgraph.tool.idempotency_key=true, tenxgraph.tool.attempt=1, tenxgraph.tool.outcome="ran"}`,
        `  step MAIN  {tenxgraph.node="MAIN", tenxgraph.step=2, tenxgraph.step.version=4, tenxgraph.step.durable=true}`,
      ].join("\n"),
    );
    // One trace; ids on the spans, for a backend to search by.
    const run = span("invoke_agent support");
    expect(new Set(spans().map((s) => s.spanContext().traceId))).toEqual(
      new Set([run.spanContext().traceId]),
    );
    expect(run.attributes).toMatchObject({
      "gen_ai.conversation.id": "t",
      "tenxgraph.thread.id": "t",
      "tenxgraph.run.id": result.runId,
    });
    expect(span("execute_tool charge_card").attributes).toMatchObject({
      "gen_ai.tool.call.id": "call_2",
      "tenxgraph.ledger.key": "charge_card:order-4821-charge",
    });
    expect(span("execute_tool charge_card").attributes["gen_ai.tool.call.arguments"]).toBe(
      undefined,
    );
  });

  it("a call refused before the ledger gets a span: outcome refused, error.type its code", async () => {
    const { tracer, spans, span } = testTracer();
    const app = supportAgent({
      model: [
        {
          toolCalls: [
            { name: "refund_everything", args: {} },
            { name: "charge_card", args: { order_id: "4821", amount_cents: "a lot" } },
          ],
        },
        "Sorry.",
      ],
      tools: supportTools(),
      tracing: { tracer },
    });
    const result = await app.invoke({ messages: [Message.user("refund")] }, { threadId: "t" });
    expect(result.status).toBe("completed");
    for (const [name, code] of [
      ["refund_everything", "TOOL_NOT_FOUND_001"],
      ["charge_card", "TOOL_ARGS_001"],
    ]) {
      const refused = span(`execute_tool ${name}`);
      expect(refused.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "tenxgraph.tool.outcome": "refused",
        "error.type": code,
      });
      expect(refused.status.code).toBe(SpanStatusCode.ERROR);
      // A child of the tool step, like every call's span.
      const step = spans().find((s) => s.name === "step TOOL")!;
      expect(refused.parentSpanContext?.spanId).toBe(step.spanContext().spanId);
    }
  });

  it("records tool arguments and results only with recordContent", async () => {
    const { tracer, span } = testTracer();
    const app = supportAgent({
      model: TWO_CALLS,
      tools: supportTools(),
      tracing: { tracer, recordContent: true },
    });
    await app.invoke({ messages: [Message.user("charge 4821")] }, { threadId: "t" });
    expect(span("execute_tool charge_card").attributes).toMatchObject({
      "gen_ai.tool.call.arguments": '{"order_id":"4821","amount_cents":4200}',
      "gen_ai.tool.call.result": '"Charged 42 USD"',
    });
    expect(span("invoke_agent").name).toBe("invoke_agent");
  });

  it("a failed run's span has the error's code and status ERROR", async () => {
    const { tracer, span } = testTracer();
    const app = supportAgent({
      model: [() => Message.assistant("x", [{ id: "c", name: "t", arguments: "{}" }])],
      tools: supportTools(),
      tracing: { tracer },
    });
    await expect(
      app.invoke({ messages: [Message.user("hi")] }, { threadId: "t", recursionLimit: 1 }),
    ).rejects.toMatchObject({ code: "RECURSION_001" });
    const run = span("invoke_agent");
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.attributes).toMatchObject({
      "tenxgraph.run.status": "failed",
      "error.type": "RECURSION_001",
    });
  });

  it("a run continued after a failure links to the run it continues", async () => {
    const { tracer, spans } = testTracer();
    let failures = 1;
    const app = supportAgent({
      model: [
        () => {
          if (failures-- > 0) throw new Error("the model's host went away");
          return Message.assistant("Done.");
        },
      ],
      tools: supportTools(),
      tracing: { tracer },
    });
    await expect(app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" })).rejects.toThrow(
      "went away",
    );
    const result = await app.invoke(null, { threadId: "t" });
    expect(result.status).toBe("completed");
    const [failed, continued] = spans().filter((span) => span.name === "invoke_agent");
    expect(failed!.attributes["tenxgraph.run.status"]).toBe("failed");
    expect(continued!.attributes["tenxgraph.run.mode"]).toBe("continue");
    const { traceId, spanId } = failed!.spanContext();
    expect(continued!.links).toMatchObject([
      { context: { traceId, spanId }, attributes: { "tenxgraph.link": "continue" } },
    ]);
    // Each run is its own trace.
    expect(continued!.spanContext().traceId).not.toBe(failed!.spanContext().traceId);
  });

  it("without an SDK: spans are started by name only and nothing is set on them", async () => {
    const touched: string[] = [];
    let started = 0;
    const noop = trace.getTracer("no-sdk"); // no SDK is registered in this process
    const tracer: Tracer = {
      startSpan(name, options, ctx) {
        started += 1;
        return watched(noop.startSpan(name, options, ctx), touched);
      },
      startActiveSpan: noop.startActiveSpan.bind(noop),
    };
    const app = supportAgent({ model: TWO_CALLS, tools: supportTools(), tracing: { tracer } });
    await app.invoke({ messages: [Message.user("charge 4821")] }, { threadId: "t" });
    expect(started).toBe(6); // the run, three steps, two tool calls
    expect(touched).toEqual([]);
  });
});

/** `span`, noting each of its methods called other than reading it and ending it. */
function watched(span: Span, touched: string[]): Span {
  const reads = new Set(["isRecording", "spanContext", "end"]);
  return new Proxy(span, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (!reads.has(String(property))) touched.push(String(property));
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
}
