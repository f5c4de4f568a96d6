import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { CompileOptions } from "../graph/compiled-graph.js";
import { END } from "../graph/edges.js";
import type { NodeFunction } from "../graph/graph-node.js";
import type { BaseState } from "../graph/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import {
  deferred,
  forever,
  nextMacrotask,
  recordingLogger,
  settle,
  testMeter,
  untilAborted,
} from "../testing/test-support.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { sleep } from "./deadline.js";

type State = BaseState & Record<string, unknown>;

/**
 * HANG → AFTER → END. HANG hangs forever, ignoring its signal, the first time it runs; after
 * that it answers at once. `entered` resolves when it starts hanging.
 */
function hangOnce(checkpointer: Checkpointer, options: CompileOptions = {}) {
  const entered = deferred();
  const calls = { HANG: 0, AFTER: 0 };
  const hang: NodeFunction<State> = () => {
    calls.HANG += 1;
    if (calls.HANG > 1) return Message.assistant("no hang this time");
    entered.resolve();
    return forever();
  };
  const app = new StateGraph()
    .addNode("HANG", hang)
    .addNode("AFTER", () => void (calls.AFTER += 1))
    .addEdge("HANG", "AFTER")
    .addEdge("AFTER", END)
    .setEntryPoint("HANG")
    .compile({ checkpointer, logger: recordingLogger(), ...options });
  return { app, entered, calls };
}

/** A run's promise, and whether it has settled yet. */
function track<T>(promise: Promise<T>) {
  const tracked = { settled: false, outcome: settle(promise) };
  void tracked.outcome.then(() => (tracked.settled = true));
  return tracked;
}

describe("stop()", () => {
  it("ends a run whose node hangs forever: status stopped at that node, counted, continuable", async () => {
    const store = new InMemoryCheckpointer();
    const meter = testMeter();
    const { app, entered, calls } = hangOnce(store, { meter: meter.meter });
    const run = track(app.invoke({ messages: [Message.user("go")] }, { threadId: "t" }));
    await entered.promise;
    await nextMacrotask();
    expect(run.settled).toBe(false);

    await app.stop({ threadId: "t" });
    const outcome = await run.outcome;
    expect(outcome.ok && outcome.value.status).toBe("stopped");
    expect(outcome.ok && outcome.value.state.messages.map((m) => m.content)).toEqual(["go"]);
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "stopped",
      currentNode: "HANG",
    });
    expect(calls).toEqual({ HANG: 1, AFTER: 0 });
    expect(await meter.sum("tenxgraph.run.stops")).toBe(1);
    // Requests are counted, not consumed: the next run starts from this count.
    expect(await store.countStopRequests("t")).toBe(1);

    const continued = await app.invoke(null, { threadId: "t" });
    expect(continued.status).toBe("completed");
    expect(calls).toEqual({ HANG: 2, AFTER: 1 });
    expect(continued.state.messages.map((m) => m.content)).toEqual(["go", "no hang this time"]);
  });

  it("aborts the signal of a tool running in the stopped node; its claim stays open", async () => {
    const started = deferred<AbortSignal>();
    const hung = tool({
      name: "hung",
      description: "Never returns on its own",
      schema: z.object({}),
      execute: (_, ctx) => (started.resolve(ctx.signal), untilAborted(ctx.signal)),
    });
    const app = new StateGraph()
      .addNode("MAIN", new ScriptedModel([{ toolCalls: [{ name: "hung", args: {} }] }]))
      .addNode("TOOL", new ToolNode([hung]))
      .addEdge("MAIN", "TOOL")
      .addEdge("TOOL", END)
      .setEntryPoint("MAIN")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    const run = settle(app.invoke({}, { threadId: "t" }));
    const signal = await started.promise;
    await app.stop({ threadId: "t" });
    const outcome = await run;
    expect(outcome.ok && outcome.value.status).toBe("stopped");
    expect(signal.aborted).toBe(true);
    expect((await app.getState({ threadId: "t" }))?.currentNode).toBe("TOOL");
    expect((await app.getToolLedger({ threadId: "t" })).map((e) => e.status)).toEqual(["started"]);
  });

  it("from another caller (a second compiled graph on the same store) reaches the run through the store", async () => {
    const store = new InMemoryCheckpointer();
    const meter = testMeter();
    const { app, entered, calls } = hangOnce(store, {
      stopPollIntervalMs: 20,
      meter: meter.meter,
    });
    const other = new StateGraph()
      .addNode("X", () => undefined)
      .addEdge("X", END)
      .setEntryPoint("X")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const run = track(app.invoke({}, { threadId: "t" }));
    await entered.promise;
    await other.stop({ threadId: "t" });
    expect(await store.countStopRequests("t")).toBe(1);

    const outcome = await run.outcome;
    expect(outcome.ok && outcome.value.status).toBe("stopped");
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "stopped",
      currentNode: "HANG",
    });
    expect(await meter.sum("tenxgraph.run.stops")).toBe(1);
    expect((await app.invoke(null, { threadId: "t" })).status).toBe("completed");
    expect(calls).toEqual({ HANG: 2, AFTER: 1 });
  });

  it("a stop request made while no run is active does not stop the next run", async () => {
    const store = new InMemoryCheckpointer();
    const ran: string[] = [];
    const build = () =>
      new StateGraph()
        .addNode("SLOW", async (_, ctx) => {
          // Several poll intervals: a stale request would be seen here.
          await sleep(100, ctx.signal);
          ran.push(ctx.runId);
        })
        .addEdge("SLOW", END)
        .setEntryPoint("SLOW")
        .compile({ checkpointer: store, logger: recordingLogger(), stopPollIntervalMs: 20 });
    const app = build();

    await app.stop({ threadId: "t" }); // no such thread yet
    expect((await app.invoke({}, { threadId: "t" })).status).toBe("completed");

    await build().stop({ threadId: "t" }); // an idle thread, from another caller
    const second = await app.invoke({}, { threadId: "t" });
    expect(second.status).toBe("completed");
    expect(ran).toHaveLength(2);
    expect((await app.getState({ threadId: "t" }))?.status).toBe("completed");
  });
});

describe("RunConfig.signal", () => {
  it("aborting it stops the run like stop()", async () => {
    const meter = testMeter();
    const { app, entered, calls } = hangOnce(new InMemoryCheckpointer(), { meter: meter.meter });
    const controller = new AbortController();
    const run = settle(app.invoke({}, { threadId: "t", signal: controller.signal }));
    await entered.promise;
    controller.abort();
    const outcome = await run;
    expect(outcome.ok && outcome.value.status).toBe("stopped");
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "stopped",
      currentNode: "HANG",
    });
    expect(await meter.sum("tenxgraph.run.stops")).toBe(1);
    expect((await app.invoke(null, { threadId: "t" })).status).toBe("completed");
    expect(calls).toEqual({ HANG: 2, AFTER: 1 });
  });

  it("an already aborted signal stops the run before any node runs", async () => {
    const { app, calls } = hangOnce(new InMemoryCheckpointer());
    const result = await app.invoke(
      { messages: [Message.user("hi")] },
      { threadId: "t", signal: AbortSignal.abort() },
    );
    expect(result.status).toBe("stopped");
    expect(calls).toEqual({ HANG: 0, AFTER: 0 });
    // The input is kept: the thread waits at its entry point.
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "stopped",
      currentNode: "HANG",
      values: { messages: [expect.objectContaining({ content: "hi" })] },
    });
  });

  it("aborting the signal after the run ended changes nothing", async () => {
    const { app } = hangOnce(new InMemoryCheckpointer());
    const controller = new AbortController();
    const run = settle(app.invoke({}, { threadId: "t", signal: controller.signal }));
    await app.stop({ threadId: "t" });
    expect((await run).ok).toBe(true);
    // Aborting after the run ended must not touch the finished thread.
    const before = await app.getState({ threadId: "t" });
    controller.abort();
    await nextMacrotask();
    expect(await app.getState({ threadId: "t" })).toEqual(before);
  });
});
