import { describe, expect, it } from "vitest";
import { z } from "zod";
import { NodeTimeoutError } from "../errors/errors.js";
import type { StreamEvent } from "../events/stream-event.js";
import type { CompileOptions } from "../graph/compile-options.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  collectEvents,
  deferred,
  RecordingCheckpointer,
  recordingLogger,
  settle,
  testMeter,
  transcriptShape,
  untilAborted,
} from "../support/helpers.js";
import { ScriptedModel, type ScriptedTurn } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import { interrupt } from "../node/interrupt.js";

type State = BaseState & Record<string, unknown>;

function lookupTool(executions: { count: number } = { count: 0 }) {
  return tool({
    name: "lookup",
    description: "Look up an order",
    schema: z.object({ id: z.string() }),
    execute: ({ id }) => {
      executions.count += 1;
      return `order ${id} shipped`;
    },
  });
}

const SCRIPT: ScriptedTurn<State>[] = [
  { toolCalls: [{ name: "lookup", args: { id: "7" } }] },
  "All done now",
];

/** MAIN (scripted model) ⇄ TOOL until the model stops asking for tools. */
function agent(
  checkpointer: Checkpointer,
  { executions, ...options }: CompileOptions & { executions?: { count: number } } = {},
) {
  return new StateGraph()
    .addNode("MAIN", new ScriptedModel(SCRIPT))
    .addNode("TOOL", new ToolNode([lookupTool(executions)]))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: recordingLogger(), ...options });
}

const ofType = <T extends StreamEvent["type"]>(events: StreamEvent[], type: T) =>
  events.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);

const input = () => ({ messages: [Message.user("where is order 7?")] });

describe("stream events", () => {
  it("yields run_start, node_start, message, message_delta, tool_start, tool_result, state and run_end in loop order (a step's messages before its state)", async () => {
    const store = new RecordingCheckpointer();
    const app = agent(store);
    const { events, error } = await collectEvents(app.stream(input(), { threadId: "t" }));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual([
      "run_start",
      "state",
      "node_start",
      "message",
      "state",
      "node_start",
      "tool_start",
      "tool_result",
      "message",
      "state",
      "node_start",
      "message_delta",
      "message_delta",
      "message_delta",
      "message",
      "state",
      "run_end",
    ]);

    const final = await app.getState({ threadId: "t" });
    const [, issuer, toolMessage, answer] = final!.values.messages;
    expect(events[0]).toEqual({
      type: "run_start",
      threadId: "t",
      runId: expect.any(String),
      mode: "new",
    });
    expect(ofType(events, "node_start")).toEqual([
      { type: "node_start", node: "MAIN", step: 0 },
      { type: "node_start", node: "TOOL", step: 1 },
      { type: "node_start", node: "MAIN", step: 2 },
    ]);
    expect(ofType(events, "state")).toEqual([
      { type: "state", version: 1, step: 0, currentNode: "MAIN", status: "running" },
      { type: "state", version: 2, step: 1, currentNode: "TOOL", status: "running" },
      { type: "state", version: 3, step: 2, currentNode: "MAIN", status: "running" },
      { type: "state", version: 4, step: 3, currentNode: null, status: "completed" },
    ]);
    // One state event per durable write, carrying the version that write committed.
    expect(ofType(events, "state").map((e) => e.version)).toEqual(
      store.writes.map((w) => w.committedVersion),
    );
    const key = `${issuer!.id}:call_1`;
    expect(ofType(events, "tool_start")).toEqual([
      { type: "tool_start", node: "TOOL", key, toolCallId: "call_1", toolName: "lookup" },
    ]);
    expect(ofType(events, "tool_result")).toEqual([
      {
        type: "tool_result",
        node: "TOOL",
        key,
        toolCallId: "call_1",
        toolName: "lookup",
        replayed: false,
        isError: false,
        message: toolMessage,
      },
    ]);
    const deltas = ofType(events, "message_delta");
    expect(deltas.map((d) => d.delta).join("")).toBe("All done now");
    expect(deltas.every((d) => d.messageId === answer!.id && d.node === "MAIN")).toBe(true);
    // Every message a step added, as it was committed; the input is not echoed.
    expect(ofType(events, "message").map((e) => [e.node, e.message])).toEqual([
      ["MAIN", issuer],
      ["TOOL", toolMessage],
      ["MAIN", answer],
    ]);
    expect(events.at(-1)).toEqual({ type: "run_end", status: "completed", version: 4 });
  });

  it("gives the same transcript, writes and versions as invoke for the same script", async () => {
    const invokeStore = new RecordingCheckpointer();
    const streamStore = new RecordingCheckpointer();
    const invoked = await agent(invokeStore).invoke(input(), { threadId: "t" });
    const streamApp = agent(streamStore);
    const { events } = await collectEvents(streamApp.stream(input(), { threadId: "t" }));
    const streamed = await streamApp.getState({ threadId: "t" });

    expect(transcriptShape(streamed!.values.messages)).toEqual(
      transcriptShape(invoked.state.messages),
    );
    expect(streamed?.version).toBe(invoked.version);
    expect(events.at(-1)).toEqual({
      type: "run_end",
      status: invoked.status,
      version: invoked.version,
    });
    const writes = (store: RecordingCheckpointer) =>
      store.writes.map((w) => ({
        expectedVersion: w.expectedVersion,
        step: w.step,
        currentNode: w.currentNode,
        status: w.status,
        newMessages: transcriptShape(w.newMessages),
      }));
    expect(writes(streamStore)).toEqual(writes(invokeStore));
    expect(
      (await streamApp.getToolLedger({ threadId: "t" })).map((e) => [e.toolName, e.status]),
    ).toEqual([["lookup", "completed"]]);
  });

  it("yields interrupt then run_end interrupted, and a resumed stream runs to completion", async () => {
    const app = new StateGraph()
      .addNode("ASK", () => {
        const answer = interrupt<string>({ question: "ship it?" }, { message: "Approve?" });
        return Message.assistant(`answer: ${answer}`);
      })
      .addEdge("ASK", END)
      .setEntryPoint("ASK")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    const paused = await collectEvents(app.stream({}, { threadId: "t" }));
    expect(paused.events.map((e) => e.type)).toEqual([
      "run_start",
      "state",
      "node_start",
      "state",
      "interrupt",
      "run_end",
    ]);
    expect(paused.events.slice(-3)).toEqual([
      { type: "state", version: 2, step: 0, currentNode: "ASK", status: "interrupted" },
      {
        type: "interrupt",
        interrupts: [
          {
            id: expect.any(String),
            value: { question: "ship it?" },
            message: "Approve?",
            node: "ASK",
          },
        ],
      },
      { type: "run_end", status: "interrupted", version: 2 },
    ]);

    const resumed = await collectEvents(app.stream({ resume: "yes" }, { threadId: "t" }));
    expect(resumed.events[0]).toMatchObject({ type: "run_start", mode: "resume" });
    expect(ofType(resumed.events, "message").map((e) => e.message.content)).toEqual([
      "answer: yes",
    ]);
    expect(resumed.events.at(-1)).toMatchObject({ type: "run_end", status: "completed" });
  });

  it("yields error on failure, then the iterator throws the run's error", async () => {
    const app = new StateGraph()
      .addNode("BOOM", () => {
        throw new Error("boom");
      })
      .addEdge("BOOM", END)
      .setEntryPoint("BOOM")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    const { events, error } = await collectEvents(app.stream({}, { threadId: "t" }));
    // The failure is written durably (a state event) before the error is reported.
    expect(events.slice(2)).toEqual([
      { type: "node_start", node: "BOOM", step: 0 },
      { type: "state", version: 2, step: 0, currentNode: "BOOM", status: "failed" },
      { type: "error", code: null, message: "boom" },
    ]);
    expect((error as Error).message).toBe("boom");
    expect((await app.getState({ threadId: "t" }))?.status).toBe("failed");
  });

  it("applies node deadlines as invoke does: error event with the code, then NodeTimeoutError", async () => {
    const meter = testMeter();
    const app = new StateGraph()
      .addNode("HANG", (_, ctx) => untilAborted(ctx.signal))
      .addEdge("HANG", END)
      .setEntryPoint("HANG")
      .compile({
        checkpointer: new InMemoryCheckpointer(),
        logger: recordingLogger(),
        meter: meter.meter,
      });
    const { events, error } = await collectEvents(
      app.stream({}, { threadId: "t", nodeTimeout: 0.05 }),
    );
    expect(events.at(-1)).toEqual({
      type: "error",
      code: "NODE_TIMEOUT_001",
      message: "Node 'HANG' timed out after 0.05 s",
    });
    expect(error).toBeInstanceOf(NodeTimeoutError);
    expect(await meter.sum("tenxgraph.node.timeouts")).toBe(1);
  });

  it("applies tool deadlines as invoke does: the call's tool_result is an error", async () => {
    const slow = tool({
      name: "lookup",
      description: "Hangs until aborted",
      schema: z.object({ id: z.string() }),
      execute: (_, ctx) => untilAborted(ctx.signal),
    });
    const app = new StateGraph()
      .addNode("MAIN", new ScriptedModel(SCRIPT))
      .addNode("TOOL", new ToolNode([slow]))
      .addConditionalEdges("MAIN", (s) => (s.messages.length < 3 ? "TOOL" : END))
      .addEdge("TOOL", "MAIN")
      .setEntryPoint("MAIN")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    const { events, error } = await collectEvents(
      app.stream(input(), { threadId: "t", toolTimeout: 0.05 }),
    );
    expect(error).toBeUndefined();
    const [result] = ofType(events, "tool_result");
    expect(result).toMatchObject({ replayed: false, isError: true });
    expect(result?.message.content).toBe(
      "Tool 'lookup' failed: [NODE_TIMEOUT_002] Tool 'lookup' timed out after 0.05 s",
    );
    expect(events.at(-1)).toMatchObject({ type: "run_end", status: "completed" });
  });
});

describe("ending a stream early", () => {
  /** A → B → C; B hangs (honouring its signal) the first time. */
  function abc(checkpointer: Checkpointer, options: CompileOptions = {}) {
    const calls = { A: 0, B: 0, C: 0 };
    const signals: AbortSignal[] = [];
    const app = new StateGraph()
      .addNode("A", () => void (calls.A += 1))
      .addNode("B", (_, ctx) => {
        calls.B += 1;
        signals.push(ctx.signal);
        return calls.B === 1 ? untilAborted(ctx.signal) : undefined;
      })
      .addNode("C", () => void (calls.C += 1))
      .addEdge("A", "B")
      .addEdge("B", "C")
      .addEdge("C", END)
      .setEntryPoint("A")
      .compile({ checkpointer, logger: recordingLogger(), ...options });
    return { app, calls, signals };
  }

  it("breaking out of the iterator stops the run cleanly: stopped at the node, nothing further runs", async () => {
    const meter = testMeter();
    const { app, calls, signals } = abc(new InMemoryCheckpointer(), { meter: meter.meter });
    const seen: string[] = [];
    for await (const event of app.stream({}, { threadId: "t" })) {
      seen.push(event.type);
      if (event.type === "node_start" && event.node === "B") break;
    }
    // The loop above returns only once the run has ended.
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "stopped",
      currentNode: "B",
    });
    expect(calls).toEqual({ A: 1, B: 1, C: 0 });
    expect(signals[0]?.aborted).toBe(true);
    expect(await meter.sum("tenxgraph.run.stops")).toBe(1);
    expect(seen).not.toContain("run_end");

    const continued = await collectEvents(app.stream(null, { threadId: "t" }));
    expect(continued.events[0]).toMatchObject({ type: "run_start", mode: "continue" });
    expect(ofType(continued.events, "node_start").map((e) => e.node)).toEqual(["B", "C"]);
    expect(continued.events.at(-1)).toMatchObject({ type: "run_end", status: "completed" });
    expect(calls).toEqual({ A: 1, B: 2, C: 1 });
  });

  it("stop() during a stream ends it with run_end stopped, without an error", async () => {
    const { app, calls } = abc(new InMemoryCheckpointer());
    const events: StreamEvent[] = [];
    const entered = deferred();
    const consumed = settle(
      (async () => {
        for await (const event of app.stream({}, { threadId: "t" })) {
          events.push(event);
          if (event.type === "node_start" && event.node === "B") entered.resolve();
        }
      })(),
    );
    await entered.promise;
    await app.stop({ threadId: "t" });
    expect((await consumed).ok).toBe(true);
    expect(events.slice(-2)).toEqual([
      { type: "state", version: 3, step: 1, currentNode: "B", status: "stopped" },
      { type: "run_end", status: "stopped", version: 3 },
    ]);
    expect(calls.C).toBe(0);
  });

  it("a continued stream replays a recorded tool call from the ledger after a lost step write", async () => {
    const store = new InMemoryCheckpointer();
    const executions = { count: 0 };
    const faults = new FaultPoints();
    // Writes: start, after MAIN, after TOOL (lost, and so is the failure write after it).
    faults.arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      () => {
        throw new Error("crash");
      },
      { when: () => faults.hits(FAULT_POINTS.STEP_BEFORE_WRITE) >= 3, times: 2 },
    );
    const crashed = await collectEvents(
      agent(store, { faultPoints: faults, executions }).stream(input(), { threadId: "t" }),
    );
    expect((crashed.error as Error).message).toBe("crash");
    expect(executions.count).toBe(1);

    const meter = testMeter();
    const resumed = await collectEvents(
      agent(store, { executions, meter: meter.meter }).stream(null, { threadId: "t" }),
    );
    expect(resumed.events[0]).toMatchObject({ type: "run_start", mode: "continue" });
    expect(ofType(resumed.events, "tool_result")).toEqual([
      expect.objectContaining({ toolName: "lookup", replayed: true, isError: false }),
    ]);
    expect(executions.count).toBe(1);
    expect(await meter.sum("tenxgraph.tool.ledger_hits")).toBe(1);
    expect(resumed.events.at(-1)).toMatchObject({ type: "run_end", status: "completed" });
  });
});
