import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { NodeTimeoutError } from "../errors/errors.js";
import type { CompileOptions } from "../graph/compile-options.js";
import { END } from "../definition/edges.js";
import type { NodeFunction } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import {
  deferred,
  nextMacrotask,
  RecordingCheckpointer,
  recordingLogger,
  settle,
  testMeter,
  untilAborted,
} from "../support/helpers.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool, type AnyTool } from "../tools/tool.js";
import { runWithDeadline, sleep, type DeadlineScope } from "./deadline.js";

const never = () => new AbortController().signal;

describe("runWithDeadline", () => {
  it("returns what the work returns", async () => {
    const value = await runWithDeadline(async () => 42, {
      parent: never(),
      timeoutMs: 1000,
      onTimeout: () => new Error("timeout"),
    });
    expect(value).toBe(42);
  });

  it("rejects with onTimeout() and aborts the work's signal when the deadline passes", async () => {
    let seen: AbortSignal | undefined;
    const timeout = new Error("deadline");
    const run = runWithDeadline(
      ({ signal }) => {
        seen = signal;
        return untilAborted(signal);
      },
      { parent: never(), timeoutMs: 10, onTimeout: () => timeout },
    );
    await expect(run).rejects.toBe(timeout);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(timeout);
  });

  it("a signal first read after the deadline passed is already aborted, with its reason", async () => {
    const timeout = new Error("deadline");
    const readLate = deferred<AbortSignal>();
    const run = runWithDeadline(
      async (scope) => {
        await sleep(30);
        readLate.resolve(scope.signal);
      },
      { parent: never(), timeoutMs: 5, onTimeout: () => timeout },
    );
    await expect(run).rejects.toBe(timeout);
    const signal = await readLate.promise;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(timeout);
  });

  it("settles when the parent aborts, even if the work ignores its signal", async () => {
    const parent = new AbortController();
    const run = runWithDeadline(() => new Promise<never>(() => {}), {
      parent: parent.signal,
      timeoutMs: null,
      onTimeout: () => new Error("unused"),
    });
    parent.abort("stop");
    await expect(run).rejects.toBe("stop");
  });

  it("work under a scope (a tool call under its node) aborts with it, the scope's signal never made", async () => {
    const outer = new AbortController();
    const inner: { scope?: DeadlineScope; signal?: AbortSignal } = {};
    const node = runWithDeadline(
      (scope) =>
        runWithDeadline(
          (child) => {
            inner.scope = child;
            return new Promise<never>(() => {});
          },
          { parent: scope, timeoutMs: null, onTimeout: () => new Error("unused") },
        ),
      { parent: outer.signal, timeoutMs: null, onTimeout: () => new Error("unused") },
    );
    expect(inner.scope?.aborted).toBe(false);
    expect(inner.scope?.reason).toBeUndefined();
    outer.abort("stop");
    await expect(node).rejects.toBe("stop");
    // The child was aborted through the scope, and its signal, read now, says so.
    expect(inner.scope?.aborted).toBe(true);
    expect(inner.scope?.reason).toBe("stop");
    inner.signal = inner.scope?.signal;
    expect(inner.signal?.aborted).toBe(true);
    expect(inner.signal?.reason).toBe("stop");
  });

  it("never starts the work under a parent that already aborted", async () => {
    let started = false;
    const run = runWithDeadline(
      () => {
        started = true;
        return "ran";
      },
      {
        parent: AbortSignal.abort("stopped"),
        timeoutMs: null,
        onTimeout: () => new Error("unused"),
      },
    );
    await expect(run).rejects.toBe("stopped");
    expect(started).toBe(false);
  });

  it("a deadline longer than one Node timer can hold (about 24.8 days) does not fire at once", async () => {
    const thirtyDays = 30 * 24 * 3600 * 1000;
    const value = await runWithDeadline(() => sleep(20).then(() => "finished"), {
      parent: never(),
      timeoutMs: thirtyDays,
      onTimeout: () => new Error("fired early"),
    });
    expect(value).toBe("finished");
  });

  describe("with fake timers", () => {
    afterEach(() => void vi.useRealTimers());

    it("a deadline longer than one Node timer still fires, at its time", async () => {
      vi.useFakeTimers();
      const thirtyDays = 30 * 24 * 3600 * 1000;
      const timeout = new Error("deadline");
      const run = settle(
        runWithDeadline(({ signal }) => untilAborted(signal), {
          parent: never(),
          timeoutMs: thirtyDays,
          onTimeout: () => timeout,
        }),
      );
      await vi.advanceTimersByTimeAsync(thirtyDays - 1000);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1000);
      expect(await run).toEqual({ ok: false, error: timeout });
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  it("sleep resolves after its time, or rejects with the signal's reason", async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort("enough");
    await expect(pending).rejects.toBe("enough");
  });
});

/** START → NODE → END. */
type State = BaseState & Record<string, unknown>;

function oneNode(node: NodeFunction<State>, options: CompileOptions = {}) {
  return new StateGraph()
    .addNode("NODE", node)
    .addEdge("NODE", END)
    .setEntryPoint("NODE")
    .compile({ checkpointer: new RecordingCheckpointer(), logger: recordingLogger(), ...options });
}

/** MAIN asks for one call of `t`, then answers "done". */
function oneToolCall(t: AnyTool, options: CompileOptions = {}) {
  return new StateGraph()
    .addNode("MAIN", new ScriptedModel([{ toolCalls: [{ name: t.name, args: {} }] }, "done"]))
    .addNode("TOOL", new ToolNode([t]))
    .addConditionalEdges("MAIN", (s) => (s.messages.length < 3 ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer: new RecordingCheckpointer(), logger: recordingLogger(), ...options });
}

function slowTool(
  options: { timeout?: number | null; workMs?: number; signals?: AbortSignal[] } = {},
) {
  return tool({
    name: "slow",
    description: "Takes its time",
    schema: z.object({}),
    timeout: options.timeout,
    async execute(_, ctx) {
      options.signals?.push(ctx.signal);
      if (options.workMs === undefined) return untilAborted(ctx.signal);
      await sleep(options.workMs, ctx.signal);
      return "finished";
    },
  });
}

describe("node deadline", () => {
  it("NodeTimeoutError NODE_TIMEOUT_001: counted, the node's signal aborted, the thread failed there", async () => {
    const meter = testMeter();
    const signals: AbortSignal[] = [];
    let calls = 0;
    const app = oneNode(
      (_, ctx) => {
        calls += 1;
        signals.push(ctx.signal);
        return calls === 1 ? untilAborted(ctx.signal) : { messages: [Message.assistant("ok")] };
      },
      { meter: meter.meter },
    );
    const error = await app
      .invoke({}, { threadId: "t", nodeTimeout: 0.05 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeTimeoutError);
    expect(error).toMatchObject({
      code: "NODE_TIMEOUT_001",
      scope: "node",
      target: "NODE",
      timeoutSeconds: 0.05,
    });
    expect((error as Error).message).toBe("Node 'NODE' timed out after 0.05 s");
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBe(error);
    expect(await meter.points("tenxgraph.node.timeouts")).toEqual([
      expect.objectContaining({ attributes: { node: "NODE" }, value: 1 }),
    ]);
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "failed",
      currentNode: "NODE",
    });

    // The timed-out node runs again on continue.
    const result = await app.invoke(null, { threadId: "t", nodeTimeout: 0.05 });
    expect(result.status).toBe("completed");
    expect(result.state.messages.map((m) => m.content)).toEqual(["ok"]);
  });

  it("a node that ignores its signal cannot hold the run, and its late update never lands", async () => {
    const store = new RecordingCheckpointer();
    const gate = deferred();
    const returned = deferred();
    const app = oneNode(
      async () => {
        await gate.promise;
        returned.resolve();
        return { late: true, messages: [Message.assistant("late")] };
      },
      { checkpointer: store },
    );
    // The node is still waiting on the gate when invoke rejects: it did not hold the run.
    await expect(app.invoke({}, { threadId: "t", nodeTimeout: 0.05 })).rejects.toMatchObject({
      code: "NODE_TIMEOUT_001",
    });
    const before = await app.getState({ threadId: "t" });
    const writes = store.writes.length;

    gate.resolve();
    await returned.promise;
    await nextMacrotask();
    const after = await app.getState({ threadId: "t" });
    expect(after).toEqual(before);
    expect(after?.values).not.toHaveProperty("late");
    expect(after?.values.messages).toEqual([]);
    expect(store.writes).toHaveLength(writes);
  });

  it.each([0, -1, null])("nodeTimeout %s disables the deadline", async (nodeTimeout) => {
    const app = oneNode(async (_, ctx) => {
      await sleep(30, ctx.signal);
      return { messages: [Message.assistant("slow but fine")] };
    });
    const result = await app.invoke({}, { threadId: "t", nodeTimeout });
    expect(result.status).toBe("completed");
    expect(result.state.messages).toHaveLength(1);
  });

  it("a 30-day nodeTimeout does not cut a node short", async () => {
    const app = oneNode(async (_, ctx) => {
      await sleep(20, ctx.signal);
      return { messages: [Message.assistant("done")] };
    });
    const result = await app.invoke({}, { threadId: "t", nodeTimeout: 30 * 24 * 3600 });
    expect(result.status).toBe("completed");
  });

  it("tells the node when its deadline fires (ctx.deadlineAt), or null without one", async () => {
    const seen: (number | null)[] = [];
    const app = oneNode((_, ctx) => {
      seen.push(ctx.deadlineAt);
      return {};
    });
    const before = Date.now();
    await app.invoke({}, { threadId: "t1", nodeTimeout: 90 });
    const after = Date.now();
    await app.invoke({}, { threadId: "t2", nodeTimeout: null });
    expect(seen[0]).toBeGreaterThanOrEqual(before + 90_000);
    expect(seen[0]).toBeLessThanOrEqual(after + 90_000);
    expect(seen[1]).toBeNull();
  });

  it("covers the node's tools: a hung tool under a node deadline fails the node, not the call", async () => {
    const signals: AbortSignal[] = [];
    const app = oneToolCall(slowTool({ signals }));
    const error = await app
      .invoke({}, { threadId: "t", nodeTimeout: 0.05, toolTimeout: null })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "NODE_TIMEOUT_001", target: "TOOL" });
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    const state = await app.getState({ threadId: "t" });
    expect(state).toMatchObject({ status: "failed", currentNode: "TOOL" });
    expect(state?.values.messages.map((m) => m.role)).toEqual(["assistant"]);
    // The call may have taken effect: its claim stays open, never recorded as completed.
    expect((await app.getToolLedger({ threadId: "t" })).map((e) => e.status)).toEqual(["started"]);
  });
});

describe("tool deadline", () => {
  it("a timed-out tool becomes a NODE_TIMEOUT_002 tool message; the run goes on", async () => {
    const meter = testMeter();
    const signals: AbortSignal[] = [];
    const app = oneToolCall(slowTool({ signals }), { meter: meter.meter });
    const result = await app.invoke({}, { threadId: "t", toolTimeout: 0.05 });
    expect(result.status).toBe("completed");
    const toolMessage = result.state.messages[1];
    expect(toolMessage).toMatchObject({
      role: "tool",
      toolCallId: "call_1",
      isError: true,
      content: "Tool 'slow' failed: [NODE_TIMEOUT_002] Tool 'slow' timed out after 0.05 s",
    });
    expect(result.state.messages.at(-1)?.content).toBe("done");
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toMatchObject({ code: "NODE_TIMEOUT_002" });
    expect(await meter.points("tenxgraph.tool.timeouts")).toEqual([
      expect.objectContaining({ attributes: { tool: "slow" }, value: 1 }),
    ]);
    expect(await meter.sum("tenxgraph.node.timeouts")).toBe(0);
    // The error is the call's recorded outcome: a replay returns it instead of running again.
    expect((await app.getToolLedger({ threadId: "t" })).map((e) => e.status)).toEqual([
      "completed",
    ]);
  });

  it("a tool's own timeout wins over a disabled run toolTimeout", async () => {
    const app = oneToolCall(slowTool({ timeout: 0.05 }));
    const result = await app.invoke({}, { threadId: "t", toolTimeout: null });
    expect(result.state.messages[1]?.content).toBe(
      "Tool 'slow' failed: [NODE_TIMEOUT_002] Tool 'slow' timed out after 0.05 s",
    );
  });

  it.each([null, 0, 5, Infinity])(
    "a tool's own timeout (%s) wins over a shorter run toolTimeout",
    async (timeout) => {
      const app = oneToolCall(slowTool({ timeout, workMs: 40 }));
      const result = await app.invoke({}, { threadId: "t", toolTimeout: 0.01 });
      expect(result.state.messages[1]).toMatchObject({ role: "tool", content: "finished" });
      expect(result.state.messages[1]).not.toHaveProperty("isError");
    },
  );

  it.each([0, -5, null])("toolTimeout %s disables the tool deadline", async (toolTimeout) => {
    const app = oneToolCall(slowTool({ workMs: 30 }));
    const result = await app.invoke({}, { threadId: "t", toolTimeout });
    expect(result.state.messages[1]?.content).toBe("finished");
  });
});
