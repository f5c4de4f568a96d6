import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { RunEvent } from "./run-event.js";
import type { StreamEvent } from "../events/stream-event.js";
import type { DebugChunk, MessagesChunk, TasksChunk } from "./stream-mode.js";
import type { CheckpointChunk } from "./run-event.js";
import { interrupt } from "../node/interrupt.js";
import { END } from "../definition/edges.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { collectEvents, ofType, recordingLogger, untilAborted } from "../support/helpers.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";

interface State extends BaseState {
  progress: string[];
}

/** MAIN (scripted model, writes "main") → TOOL (a tool that writes "tool") → MAIN → END. */
function agent() {
  const lookup = tool({
    name: "lookup",
    description: "Look up an order",
    schema: z.object({ id: z.string() }),
    execute: ({ id }, ctx) => {
      ctx.write({ tool: "lookup", id });
      return `order ${id} shipped`;
    },
  });
  const model = new ScriptedModel<State>([
    { toolCalls: [{ name: "lookup", args: { id: "7" } }] },
    "All done now",
  ]);
  return new StateGraph<State>({ initialState: { progress: [] } })
    .addNode("MAIN", async (state, ctx) => {
      ctx.write({ node: "MAIN", step: ctx.step });
      const reply = await model.run(state, ctx);
      return { ...toUpdate(reply), progress: [...state.progress, `MAIN@${ctx.step}`] };
    })
    .addNode("TOOL", new ToolNode<State>([lookup]))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
}

/** The model node's output as an update (it returns a message or an update). */
function toUpdate(output: unknown): StateUpdate<State> {
  if (output && typeof output === "object" && "role" in output) {
    return { messages: [output as Message] };
  }
  return (output ?? {}) as StateUpdate<State>;
}

const input = () => ({ messages: [Message.user("where is order 7?")] });

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const chunks: T[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("stream modes", () => {
  it("events (the default) yields today's events only, the same as streamMode 'events'", async () => {
    const byDefault = await collect(agent().stream(input(), { threadId: "t" }));
    const named = await collect(agent().stream(input(), { threadId: "t", streamMode: "events" }));
    expectTypeOf(byDefault).toEqualTypeOf<StreamEvent[]>();
    expectTypeOf(named).toEqualTypeOf<StreamEvent[]>();
    expect(named.map((e) => e.type)).toEqual(byDefault.map((e) => e.type));
    const types = new Set<string>(byDefault.map((e) => e.type));
    for (const internal of ["update", "values", "custom"]) expect(types.has(internal)).toBe(false);
  });

  it("values yields the committed state after the start write and after each step", async () => {
    const app = agent();
    const values = await collect(app.stream(input(), { threadId: "t", streamMode: "values" }));
    expectTypeOf(values).toEqualTypeOf<State[]>();
    expect(values.map((v) => [v.messages.length, v.progress])).toEqual([
      [1, []],
      [2, ["MAIN@0"]],
      [3, ["MAIN@0"]],
      [4, ["MAIN@0", "MAIN@2"]],
    ]);
    const final = await app.getState({ threadId: "t" });
    expect(values.at(-1)).toEqual(final!.values);
  });

  it("values follows each step without durableCheckpointEveryStep too", async () => {
    const app = agent();
    const values = await collect(
      app.stream(input(), {
        threadId: "t",
        streamMode: "values",
        durableCheckpointEveryStep: false,
      }),
    );
    expect(values.map((v) => v.messages.length)).toEqual([1, 2, 3, 4]);
  });

  it("values are copies: changing one does not change the run", async () => {
    const app = agent();
    for await (const state of app.stream(input(), { threadId: "t", streamMode: "values" })) {
      state.progress.push("tampered");
      state.messages.length = 0;
    }
    const final = await app.getState({ threadId: "t" });
    expect(final!.values.progress).toEqual(["MAIN@0", "MAIN@2"]);
    expect(final!.values.messages).toHaveLength(4);
  });

  it("updates yields { [node]: update } for each step, as the node returned it", async () => {
    const app = agent();
    const updates = await collect(app.stream(input(), { threadId: "t", streamMode: "updates" }));
    expectTypeOf(updates).toEqualTypeOf<Record<string, StateUpdate<State>>[]>();
    const [, issuer, toolMessage, answer] = (await app.getState({ threadId: "t" }))!.values
      .messages;
    expect(updates).toEqual([
      { MAIN: { messages: [issuer], progress: ["MAIN@0"] } },
      { TOOL: { messages: [toolMessage] } },
      { MAIN: { messages: [answer], progress: ["MAIN@0", "MAIN@2"] } },
    ]);
  });

  it("messages yields token deltas and whole messages with their node and step", async () => {
    const app = agent();
    const chunks = await collect(app.stream(input(), { threadId: "t", streamMode: "messages" }));
    expectTypeOf(chunks).toEqualTypeOf<MessagesChunk[]>();
    const [, issuer, toolMessage, answer] = (await app.getState({ threadId: "t" }))!.values
      .messages;
    const deltas = chunks.flatMap(([part, meta]) =>
      part.type === "message_delta" ? [{ ...part, ...meta }] : [],
    );
    expect(deltas.map((d) => d.delta).join("")).toBe("All done now");
    expect(
      deltas.every((d) => d.messageId === answer!.id && d.node === "MAIN" && d.step === 2),
    ).toBe(true);
    expect(chunks.filter(([part]) => part.type === "message")).toEqual([
      [
        { type: "message", message: issuer },
        { node: "MAIN", step: 0 },
      ],
      [
        { type: "message", message: toolMessage },
        { node: "TOOL", step: 1 },
      ],
      [
        { type: "message", message: answer },
        { node: "MAIN", step: 2 },
      ],
    ]);
  });

  it("custom yields what nodes and tools pass to ctx.write, in order", async () => {
    const chunks = await collect(agent().stream(input(), { threadId: "t", streamMode: "custom" }));
    expectTypeOf(chunks).toEqualTypeOf<unknown[]>();
    expect(chunks).toEqual([
      { node: "MAIN", step: 0 },
      { tool: "lookup", id: "7" },
      { node: "MAIN", step: 2 },
    ]);
  });

  it("debug yields every event of the run loop with its step and a timestamp", async () => {
    const chunks = await collect(agent().stream(input(), { threadId: "t", streamMode: "debug" }));
    expectTypeOf(chunks).toEqualTypeOf<DebugChunk<State>[]>();
    const defaults = await collect(agent().stream(input(), { threadId: "t" }));
    const events: RunEvent<State>[] = chunks.map((c) => c.event);
    const internal = new Set([
      "update",
      "values",
      "custom",
      "task_start",
      "task_result",
      "checkpoint",
    ]);
    // The default events are the debug events without those the other modes show.
    expect(events.filter((e) => !internal.has(e.type)).map((e) => e.type)).toEqual(
      defaults.map((e) => e.type),
    );
    expect(chunks.every((c) => !Number.isNaN(Date.parse(c.timestamp)))).toBe(true);
    // One step's events, in order: the node's own, then (once written) messages, update,
    // state, values; each stamped with the step of its node.
    const step1 = chunks.filter((c) => c.step === 1).map((c) => c.event.type);
    expect(step1).toEqual([
      "node_start",
      "task_start",
      "tool_start",
      "custom",
      "tool_result",
      "task_result",
      "message",
      "update",
      "state",
      "checkpoint",
      "values",
    ]);
    expect(chunks[0]).toMatchObject({ step: 0, event: { type: "run_start" } });
  });

  it("tasks yields each task's start and result, as LangGraph.js's tasks mode", async () => {
    const app = agent();
    const chunks = await collect(app.stream(input(), { threadId: "t", streamMode: "tasks" }));
    expectTypeOf(chunks).toEqualTypeOf<TasksChunk[]>();
    const [user, issuer, toolMessage] = (await app.getState({ threadId: "t" }))!.values.messages;
    expect(chunks.map((c) => ("triggers" in c ? `start ${c.id}` : `result ${c.id}`))).toEqual([
      "start MAIN:0",
      "result MAIN:0",
      "start TOOL:1",
      "result TOOL:1",
      "start MAIN:2",
      "result MAIN:2",
    ]);
    expect(chunks[0]).toEqual({
      id: "MAIN:0",
      name: "MAIN",
      input: { progress: [], messages: [user] },
      triggers: ["branch:to:MAIN"],
    });
    expect(chunks[3]).toEqual({
      id: "TOOL:1",
      name: "TOOL",
      result: [["messages", [toolMessage]]],
      interrupts: [],
      error: null,
    });
    expect(chunks[1]).toMatchObject({
      result: [
        ["messages", [issuer]],
        ["progress", ["MAIN@0"]],
      ],
    });
  });

  it("tasks reports a task's error and its interrupts", async () => {
    const failing = new StateGraph()
      .addNode("ASK", () => {
        interrupt("ok?");
        return {};
      })
      .addNode("FAIL", () => {
        throw new Error("boom");
      })
      .addEdge("ASK", "FAIL")
      .addEdge("FAIL", END)
      .setEntryPoint("ASK")
      .compile({ logger: recordingLogger() });
    const paused = await collect(failing.stream(input(), { threadId: "t", streamMode: "tasks" }));
    expect(paused[1]).toMatchObject({
      id: "ASK:0",
      result: [],
      interrupts: [{ value: "ok?", node: "ASK" }],
      error: null,
    });
    const failed: TasksChunk[] = [];
    await expect(async () => {
      const stream = failing.stream({ resume: "yes" }, { threadId: "t", streamMode: "tasks" });
      for await (const chunk of stream) failed.push(chunk);
    }).rejects.toThrow("boom");
    expect(failed.at(-1)).toMatchObject({ id: "FAIL:1", result: [], error: "boom" });
  });

  it("checkpoints yields each durable write as getState() shows it", async () => {
    const app = agent();
    const chunks = await collect(app.stream(input(), { threadId: "t", streamMode: "checkpoints" }));
    expectTypeOf(chunks).toEqualTypeOf<CheckpointChunk<State>[]>();
    expect(chunks.map((c) => [c.version, c.status, c.next, c.node])).toEqual([
      [1, "running", ["MAIN"], null],
      [2, "running", ["TOOL"], "MAIN"],
      [3, "running", ["MAIN"], "TOOL"],
      [4, "completed", [], "MAIN"],
    ]);
    const { createdAt: _createdAt, ...latest } = (await app.getState({ threadId: "t" }))!;
    expect(chunks.at(-1)).toEqual(latest);
    expect(chunks[0]!.parentVersion).toBeNull();
  });

  it("several modes at once yield [mode, chunk] tuples, in the order of the run", async () => {
    const chunks = await collect(
      agent().stream(input(), { threadId: "t", streamMode: ["updates", "values", "custom"] }),
    );
    expectTypeOf(chunks).toEqualTypeOf<
      (["updates", Record<string, StateUpdate<State>>] | ["values", State] | ["custom", unknown])[]
    >();
    expect(chunks.map(([mode]) => mode)).toEqual([
      "values",
      "custom",
      "updates",
      "values",
      "custom",
      "updates",
      "values",
      "custom",
      "updates",
      "values",
    ]);
    expect(chunks[2]).toMatchObject(["updates", { MAIN: { progress: ["MAIN@0"] } }]);
  });

  it("a single mode in a list still yields tuples", async () => {
    const chunks = await collect(
      agent().stream(input(), { threadId: "t", streamMode: ["custom"] }),
    );
    expectTypeOf(chunks).toEqualTypeOf<["custom", unknown][]>();
    expect(chunks[0]).toEqual(["custom", { node: "MAIN", step: 0 }]);
  });

  it("refuses an unknown mode with INPUT_001 naming it, before anything is written", async () => {
    const app = agent();
    for (const streamMode of ["value", ["values", "tokens"], []]) {
      const { events, error } = await collectEvents(
        app.stream(input(), { threadId: "t", streamMode: streamMode as never }),
      );
      expect(events).toEqual([]);
      expect(isTenxgraphError(error, "INPUT_001")).toBe(true);
      if (typeof streamMode === "string") expect((error as Error).message).toContain('"value"');
    }
    expect(await app.getState({ threadId: "t" })).toBeNull();
  });

  it("breaking out of a values stream stops the run: the thread is left stopped", async () => {
    const calls = { A: 0, B: 0 };
    const app = new StateGraph()
      .addNode("A", () => void (calls.A += 1))
      .addNode("B", (_, ctx) => {
        calls.B += 1;
        return untilAborted(ctx.signal);
      })
      .addEdge("A", "B")
      .addEdge("B", END)
      .setEntryPoint("A")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    let seen = 0;
    for await (const _state of app.stream({}, { threadId: "t", streamMode: "values" })) {
      seen += 1;
      if (seen === 2) break; // the state after A: B is about to run
    }
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "stopped",
      currentNode: "B",
    });
    expect(calls.A).toBe(1);
  });

  it("invoke is unaffected: ctx.write is a no-op and the result is the streamed run's", async () => {
    const invoked = await agent().invoke(input(), { threadId: "t" });
    const streamedApp = agent();
    const { events } = await collectEvents(streamedApp.stream(input(), { threadId: "t" }));
    expect(invoked.status).toBe("completed");
    expect(invoked.state.progress).toEqual(["MAIN@0", "MAIN@2"]);
    expect(invoked.version).toBe(ofType(events, "run_end")[0]!.version);
    expect(invoked.state.messages.map((m) => m.role)).toEqual(
      (await streamedApp.getState({ threadId: "t" }))!.values.messages.map((m) => m.role),
    );
  });
});
