/**
 * Server runs and their traces: each run's span is named for the graph that ran it (the /v1
 * routes' default graph, or the assistant's graph on LangGraph's routes), and the WebSocket
 * takes the caller's `traceparent` from its upgrade request or from a frame, as
 * `/v1/graph/invoke` does from its headers.
 */
import { randomBytes } from "node:crypto";
import { propagation } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  END,
  InMemoryCheckpointer,
  Message,
  StateGraph,
  silentLogger,
  type BaseState,
  type CompiledGraph,
} from "@tenxgraph/core";
import { serve, type AppOptions, type RunningServer } from "@tenxgraph/server";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testTracer } from "../../packages/core/src/support/test-tracer.js";
import { userMessage } from "./support/http.js";

/** A graph that answers once, named by its reply, traced by `tracer`. */
function replyGraph(
  reply: string,
  checkpointer: InMemoryCheckpointer,
  tracer: ReturnType<typeof testTracer>["tracer"],
): CompiledGraph<BaseState> {
  return new StateGraph()
    .addNode("MAIN", () => Message.assistant(reply))
    .setEntryPoint("MAIN")
    .addEdge("MAIN", END)
    .compile({ checkpointer, logger: silentLogger, tracing: { tracer } }) as never;
}

/** A fresh `traceparent` and its parts. */
function caller() {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

describe("server runs' spans", () => {
  const spans = testTracer();
  const checkpointer = new InMemoryCheckpointer();
  const support = replyGraph("support here", checkpointer, spans.tracer);
  const billing = replyGraph("billing here", checkpointer, spans.tracer);
  const graphs: NonNullable<AppOptions["graphs"]> = {
    default: support,
    defaultId: "support",
    byId: new Map([
      ["support", support],
      ["billing", billing],
    ]),
  };
  let server: RunningServer;

  beforeAll(async () => {
    // The W3C propagator, as an app's OpenTelemetry SDK registers it.
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    server = await serve({ graph: support, graphs, port: 0 });
  });
  afterAll(async () => {
    propagation.disable();
    await server?.close();
  });

  /** The run span of `threadId`: its name says which graph ran it. */
  function runSpan(threadId: string) {
    const found = spans
      .spans()
      .filter((span) => span.attributes["tenxgraph.thread.id"] === threadId);
    expect(found, `one run span for ${threadId}`).toHaveLength(1);
    return found[0]!;
  }

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(server.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return response.json();
  }

  it("/v1/graph/invoke names the default graph and joins the caller's trace", async () => {
    const parent = caller();
    await post(
      "/v1/graph/invoke",
      { messages: [userMessage("hi")], config: { thread_id: "t-invoke" } },
      { traceparent: parent.traceparent },
    );
    const run = runSpan("t-invoke");
    expect(run.name).toBe("invoke_agent support");
    expect(run.attributes).toMatchObject({
      "gen_ai.agent.name": "support",
      "tenxgraph.graph": "support",
    });
    expect(run.spanContext().traceId).toBe(parent.traceId);
    expect(run.parentSpanContext?.spanId).toBe(parent.spanId);
    // The versions the run wrote name its trace: the inspector links them to it.
    const history = (await (await fetch(`${server.url}/v1/threads/t-invoke/history`)).json()) as {
      data: { history: { trace_id: string | null }[] };
    };
    const versions = history.data.history;
    expect(versions.length).toBeGreaterThan(1);
    expect(versions.map((v) => v.trace_id)).toEqual(versions.map(() => parent.traceId));
  });

  it("LangGraph's runs name the assistant's graph, each its own", async () => {
    const assistants = (await post("/assistants/search", {})) as {
      assistant_id: string;
      graph_id: string;
    }[];
    for (const graphId of ["support", "billing"]) {
      const assistant = assistants.find((a) => a.graph_id === graphId)!;
      const threadId = `00000000-0000-4000-8000-00000000000${graphId === "support" ? 1 : 2}`;
      await post("/threads", { thread_id: threadId, metadata: { graph_id: graphId } });
      await post(`/threads/${threadId}/runs/wait`, {
        assistant_id: assistant.assistant_id,
        input: { messages: [{ role: "user", content: "hi" }] },
      });
      const run = runSpan(threadId);
      expect(run.name).toBe(`invoke_agent ${graphId}`);
      expect(run.attributes["tenxgraph.graph"]).toBe(graphId);
    }
  });

  it("the WebSocket joins the upgrade's trace, and a frame's own traceparent wins", async () => {
    const upgrade = caller();
    const ws = new WebSocket(server.url.replace("http://", "ws://") + "/v1/graph/ws", {
      headers: { traceparent: upgrade.traceparent },
    });
    const done: (() => void)[] = [];
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { event: string; data?: { status?: string } };
      if (frame.event === "updates" && frame.data?.status === "done") done.shift()?.();
    });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const run = (frame: Record<string, unknown>) =>
      new Promise<void>((resolve) => {
        done.push(resolve);
        ws.send(JSON.stringify({ messages: [userMessage("hi")], ...frame }));
      });

    await run({ config: { thread_id: "t-ws-upgrade" } });
    const fromUpgrade = runSpan("t-ws-upgrade");
    expect(fromUpgrade.name).toBe("invoke_agent support");
    expect(fromUpgrade.spanContext().traceId).toBe(upgrade.traceId);
    expect(fromUpgrade.parentSpanContext?.spanId).toBe(upgrade.spanId);

    const own = caller();
    await run({ config: { thread_id: "t-ws-frame" }, traceparent: own.traceparent });
    const fromFrame = runSpan("t-ws-frame");
    expect(fromFrame.spanContext().traceId).toBe(own.traceId);
    expect(fromFrame.parentSpanContext?.spanId).toBe(own.spanId);
    ws.close();
  });
});
