import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { CompileOptions } from "../graph/compile-options.js";
import { END } from "../definition/edges.js";
import type { NodeFunction } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  deferred,
  forever,
  recordingLogger,
  settle,
  testMeter,
  untilAborted,
  type RecordingLogger,
  type TestMeter,
  withoutStepWrites,
} from "../support/helpers.js";
import { ScriptedModel, type ScriptedTurn } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool, type AnyTool } from "../tools/tool.js";
import { METER_NAME } from "./metrics.js";

type State = BaseState & Record<string, unknown>;

/** MAIN (scripted) ⇄ TOOL until the model stops asking for tools. */
function agent(tools: AnyTool[], script: ScriptedTurn<State>[], options: CompileOptions) {
  return new StateGraph()
    .addNode("MAIN", new ScriptedModel(script))
    .addNode("TOOL", new ToolNode(tools))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ logger: recordingLogger(), ...options });
}

/** One node, then END. */
function single(node: NodeFunction<State>, options: CompileOptions) {
  return new StateGraph()
    .addNode("NODE", node)
    .addEdge("NODE", END)
    .setEntryPoint("NODE")
    .compile({ logger: recordingLogger(), ...options });
}

const callOnce = (name: string): ScriptedTurn<State>[] => [
  { toolCalls: [{ name, args: {} }] },
  "done",
];

function simpleTool(name: string, execute: (signal: AbortSignal) => unknown) {
  return tool({
    name,
    description: name,
    schema: z.object({}),
    execute: (_, ctx) => execute(ctx.signal),
  });
}

/** A real in-memory store whose ledger cannot record completions. */
class UnrecordableLedger extends InMemoryCheckpointer {
  override async completeCall(): Promise<boolean> {
    throw new Error("ledger write failed");
  }
}

/** Each scenario makes its counter go up by exactly one. */
const scenarios: Record<string, (meter: TestMeter) => Promise<void>> = {
  "tenxgraph.node.timeouts": async ({ meter }) => {
    const app = single((_, ctx) => untilAborted(ctx.signal), { meter });
    await expect(app.invoke({}, { threadId: "t", nodeTimeout: 0.05 })).rejects.toThrow();
  },
  "tenxgraph.tool.timeouts": async ({ meter }) => {
    const app = agent([simpleTool("slow", untilAborted)], callOnce("slow"), { meter });
    await app.invoke({}, { threadId: "t", toolTimeout: 0.05 });
  },
  "tenxgraph.tool.errors": async ({ meter }) => {
    const failing = simpleTool("failing", () => {
      throw new Error("nope");
    });
    await agent([failing], callOnce("failing"), { meter }).invoke({}, { threadId: "t" });
  },
  "tenxgraph.tool.ledger_hits": async ({ meter }) => {
    // A domain key: the second turn's call is the same business fact, replayed.
    const charge = tool({
      name: "charge",
      description: "charge",
      schema: z.object({ order: z.string() }),
      idempotencyKey: ({ order }) => `order-${order}-charge`,
      execute: () => "charged",
    });
    const turn = { toolCalls: [{ name: "charge", args: { order: "7" } }] };
    await agent([charge], [turn, turn, "done"], { meter }).invoke({}, { threadId: "t" });
  },
  "tenxgraph.tool.ledger_record_failures": async ({ meter }) => {
    const app = agent([simpleTool("ok", () => "fine")], callOnce("ok"), {
      meter,
      // Ledger v1: the result is recorded on its own (v2 records it with the step write).
      checkpointer: withoutStepWrites(new UnrecordableLedger()),
    });
    await app.invoke({}, { threadId: "t" });
  },
  "tenxgraph.tool.in_doubt": async ({ meter }) => {
    let runs = 0;
    const flaky = simpleTool("flaky", (signal) => (++runs === 1 ? untilAborted(signal) : "ok"));
    const app = agent([flaky], callOnce("flaky"), { meter });
    await expect(
      app.invoke({}, { threadId: "t", nodeTimeout: 0.05, toolTimeout: null }),
    ).rejects.toThrow();
    await app.invoke(null, { threadId: "t" });
    expect(runs).toBe(2);
  },
  "tenxgraph.run.stops": async ({ meter }) => {
    const entered = deferred();
    const app = single(() => (entered.resolve(), forever()), { meter });
    const run = settle(app.invoke({}, { threadId: "t" }));
    await entered.promise;
    await app.stop({ threadId: "t" });
    expect((await run).ok).toBe(true);
  },
  "tenxgraph.storage.conflicts": async ({ meter }) => {
    const store = new InMemoryCheckpointer();
    const other = single(() => undefined, { checkpointer: store });
    const faults = new FaultPoints().arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      async () => void (await other.invoke({}, { threadId: "t" })),
      { when: (at) => at.node === "END", times: 1 },
    );
    const app = single(() => undefined, { meter, checkpointer: store, faultPoints: faults });
    await expect(app.invoke({}, { threadId: "t" })).rejects.toMatchObject({
      code: "STORAGE_CONFLICT_001",
    });
  },
};

describe("metrics", () => {
  it.each(Object.keys(scenarios))("%s counts once per event", async (name) => {
    const meter = testMeter();
    await scenarios[name]!(meter);
    expect(await meter.sum(name)).toBe(1);
    // The other counters stay untouched by this scenario.
    for (const other of Object.keys(scenarios).filter((n) => n !== name)) {
      if (name === "tenxgraph.tool.in_doubt" && other === "tenxgraph.node.timeouts") continue;
      expect(await meter.sum(other), other).toBe(0);
    }
  });

  it("every SPEC §6 instrument is created under the meter named 10xgraph", async () => {
    expect(METER_NAME).toBe("10xgraph");
    const meter = testMeter();
    for (const scenario of Object.values(scenarios)) await scenario(meter);
    expect((await meter.names()).sort()).toEqual(
      [...Object.keys(scenarios), "tenxgraph.step.duration", "tenxgraph.tool.duration"].sort(),
    );
  });

  it("records step and tool durations with the node and tool as attributes", async () => {
    const meter = testMeter();
    const app = agent([simpleTool("ok", () => "fine")], callOnce("ok"), { meter: meter.meter });
    await app.invoke({}, { threadId: "t" });
    const steps = await meter.points("tenxgraph.step.duration");
    expect(steps.map((p) => p.attributes.node).sort()).toEqual(["MAIN", "TOOL"]);
    const tools = await meter.points("tenxgraph.tool.duration");
    expect(tools).toEqual([
      expect.objectContaining({
        attributes: { tool: "ok" },
        value: expect.objectContaining({ count: 1 }),
      }),
    ]);
    // Counters are labelled too: the node or tool they concern.
    const timeouts = testMeter();
    await scenarios["tenxgraph.tool.timeouts"]!(timeouts);
    expect(await timeouts.points("tenxgraph.tool.timeouts")).toEqual([
      expect.objectContaining({ attributes: { tool: "slow" } }),
    ]);
  });
});

describe("logs", () => {
  async function runAgent(
    tools: AnyTool[],
    script: ScriptedTurn<State>[],
    checkpointer?: Checkpointer,
  ) {
    const logger = recordingLogger();
    const app = agent(tools, script, { logger, ...(checkpointer ? { checkpointer } : {}) });
    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });
    return { logger, result };
  }

  const bound = (logger: RecordingLogger, text: string) => {
    const records = logger.records.filter((r) => (r.message ?? "").includes(text));
    expect(records, text).toHaveLength(1);
    return records[0]!.fields;
  };

  it("a tool's ctx.logger is bound to threadId, runId, node and toolCallId", async () => {
    const chatty = tool({
      name: "chatty",
      description: "logs",
      schema: z.object({}),
      execute: (_, ctx) => {
        ctx.logger.info({ detail: 42 }, "tool says hi");
        return "ok";
      },
    });
    const { logger, result } = await runAgent([chatty], callOnce("chatty"));
    expect(bound(logger, "tool says hi")).toMatchObject({
      threadId: "t",
      runId: result.runId,
      node: "TOOL",
      toolCallId: "call_1",
      tool: "chatty",
      detail: 42,
    });
  });

  it("a node's ctx.logger is bound to threadId, runId and node", async () => {
    const logger = recordingLogger();
    const app = single(
      (_, ctx) => {
        ctx.logger.warn({ detail: "x" }, "node says hi");
      },
      { logger },
    );
    const result = await app.invoke({}, { threadId: "t" });
    expect(bound(logger, "node says hi")).toEqual({
      threadId: "t",
      runId: result.runId,
      node: "NODE",
      detail: "x",
    });
  });

  it("the runtime's own records carry the same fields: tool failure", async () => {
    const failing = simpleTool("failing", () => {
      throw new Error("card declined");
    });
    const { logger, result } = await runAgent([failing], callOnce("failing"));
    const record = logger.records.find((r) => r.message?.includes("card declined"));
    expect(record?.level).toBe("warn");
    expect(record?.fields).toMatchObject({
      threadId: "t",
      runId: result.runId,
      node: "TOOL",
      toolCallId: "call_1",
      tool: "failing",
      key: `${result.state.messages[1]!.id}:call_1`,
    });
    expect(result.state.messages[2]?.content).toBe(
      "Tool 'failing' failed: [TOOL_ERROR_001] card declined",
    );
  });

  it("the runtime's own records carry the same fields: a completion the ledger could not record", async () => {
    const { logger, result } = await runAgent(
      [simpleTool("ok", () => "fine")],
      callOnce("ok"),
      withoutStepWrites(new UnrecordableLedger()),
    );
    const [record] = logger.find("error", "COMPLETED but could not be recorded");
    expect(record?.fields).toMatchObject({
      threadId: "t",
      runId: result.runId,
      node: "TOOL",
      toolCallId: "call_1",
      tool: "ok",
      key: `${result.state.messages[1]!.id}:call_1`,
    });
    expect(result.state.messages[2]?.content).toBe("fine");
  });

  it("the runtime's own records carry the same fields: run failure and stop", async () => {
    const logger = recordingLogger();
    const boom = single(
      () => {
        throw new Error("boom");
      },
      { logger },
    );
    await expect(boom.invoke({}, { threadId: "failing" })).rejects.toThrow("boom");
    const [failure] = logger.find("error", "Run failed");
    expect(failure?.fields).toMatchObject({
      threadId: "failing",
      runId: expect.any(String),
      node: "NODE",
    });
    expect((failure?.fields.err as Error).message).toBe("boom");

    const entered = deferred();
    const hung = single(() => (entered.resolve(), forever()), { logger });
    const run = hung.invoke({}, { threadId: "stopping" });
    await entered.promise;
    await hung.stop({ threadId: "stopping" });
    const result = await run;
    const [stopped] = logger.find("info", "Run stopped");
    expect(stopped?.fields).toMatchObject({
      threadId: "stopping",
      runId: result.runId,
      node: "NODE",
    });
  });

  it("never logs through a global: two graphs keep their records apart", async () => {
    const first = recordingLogger();
    const second = recordingLogger();
    const node: NodeFunction<State> = (_, ctx) => ctx.logger.info({}, "hello");
    await single(node, { logger: first }).invoke({}, { threadId: "a" });
    await single(node, { logger: second }).invoke({}, { threadId: "b" });
    expect(first.find("info", "hello").map((r) => r.fields.threadId)).toEqual(["a"]);
    expect(second.find("info", "hello").map((r) => r.fields.threadId)).toEqual(["b"]);
  });
});
