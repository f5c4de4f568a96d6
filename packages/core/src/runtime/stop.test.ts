import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StaleStateError } from "../errors/errors.js";
import type { CompileOptions } from "../graph/compile-options.js";
import { END } from "../definition/edges.js";
import type { NodeFunction } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import type { Checkpointer, CheckpointWrite } from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import {
  callsTurn,
  collectEvents,
  deferred,
  forever,
  nextMacrotask,
  ofType,
  recordingLogger,
  settle,
  supportAgent,
  testMeter,
  untilAborted,
  toolText,
} from "../support/helpers.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { sleep } from "../node/deadline.js";

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
    expect(result.state.messages).toEqual([]);
    expect(calls).toEqual({ HANG: 0, AFTER: 0 });
    // Nothing was written, not even the input: the caller stopped it before it began.
    expect(await app.getState({ threadId: "t" })).toBeNull();
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

/** A node that waits until `gate` opens or its signal aborts; `entered` resolves when it starts. */
function gatedNode() {
  const entered = deferred();
  const gate = deferred();
  const node: NodeFunction<State> = (_, ctx) => {
    entered.resolve();
    return Promise.race([
      untilAborted(ctx.signal),
      gate.promise.then(() => Message.assistant("the gate opened")),
    ]);
  };
  return { node, entered, gate };
}

function gatedGraph(checkpointer: Checkpointer, options: CompileOptions = {}) {
  const { node, entered, gate } = gatedNode();
  const app = new StateGraph()
    .addNode("WAIT", node)
    .addEdge("WAIT", END)
    .setEntryPoint("WAIT")
    .compile({ checkpointer, logger: recordingLogger(), ...options });
  return { app, entered, gate };
}

/** The in-memory store, telling when its stop requests have been read `n` more times. */
class PolledStore extends InMemoryCheckpointer {
  #polls = 0;
  #waiters: { at: number; resolve: () => void }[] = [];

  polls(n: number): Promise<void> {
    const waiter = deferred();
    this.#waiters.push({ at: this.#polls + n, resolve: waiter.resolve });
    return waiter.promise;
  }

  override async countStopRequests(threadId: string): Promise<number> {
    const count = await super.countStopRequests(threadId);
    this.#polls += 1;
    for (const waiter of this.#waiters) if (this.#polls >= waiter.at) waiter.resolve();
    return count;
  }
}

describe("stop() races", () => {
  it("stops a run whose tool call is still being claimed: the tool never runs, and a continue runs it once", async () => {
    class SlowClaims extends InMemoryCheckpointer {
      readonly entered = deferred();
      readonly gate = deferred();
      readonly returned = deferred();
      override async claimCalls(...args: Parameters<InMemoryCheckpointer["claimCalls"]>) {
        this.entered.resolve();
        await this.gate.promise;
        try {
          return await super.claimCalls(...args);
        } finally {
          this.returned.resolve();
        }
      }
    }
    const store = new SlowClaims();
    const executions: { attempt: number; aborted: boolean }[] = [];
    const charge = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({}),
      // A claim handed back because the tool never began is not in doubt: no "unknown outcome".
      onInDoubt: "fail",
      execute: (_, ctx) => {
        executions.push({ attempt: ctx.attempt, aborted: ctx.signal.aborted });
        return "Charged";
      },
    });
    const app = supportAgent({
      model: [callsTurn("m-1", [["charge_card", {}]]), "Done."],
      tools: [charge],
      checkpointer: store,
    });
    const run = settle(app.invoke({ messages: [Message.user("charge")] }, { threadId: "t" }));
    await store.entered.promise;

    await app.stop({ threadId: "t" });
    const outcome = await run;
    expect(outcome.ok && outcome.value.status).toBe("stopped");
    // The claim lands after the stop: the stopped run must not go on to run the tool.
    store.gate.resolve();
    await store.returned.promise;
    await nextMacrotask();
    expect(executions).toEqual([]);
    expect((await app.getState({ threadId: "t" }))?.status).toBe("stopped");
    expect((await app.getToolLedger({ threadId: "t" })).map((e) => e.status)).toEqual([
      "interrupted",
    ]);

    const continued = await app.invoke(null, { threadId: "t" });
    expect(continued.status).toBe("completed");
    expect(executions).toEqual([{ attempt: 2, aborted: false }]);
    expect(toolText(continued.state, "call_1")).toBe("Charged");
  });

  it("a stop request from another caller is not erased by a third caller's invoke (a rejected resume)", async () => {
    const store = new PolledStore();
    const { app, entered, gate } = gatedGraph(store, { stopPollIntervalMs: 10 });
    const stopper = gatedGraph(store).app;
    const bystander = gatedGraph(store).app;
    const run = settle(app.invoke({}, { threadId: "t" }));
    await entered.promise;

    await stopper.stop({ threadId: "t" });
    await expect(bystander.invoke({ resume: 1 }, { threadId: "t" })).rejects.toMatchObject({
      code: "RESUME_003",
    });
    // Polls after the rejected resume see the request; a run that missed it would go on.
    await Promise.race([store.polls(3), run]);
    gate.resolve();

    const outcome = await run;
    expect(outcome.ok && outcome.value.status).toBe("stopped");
    expect((await app.getState({ threadId: "t" }))?.status).toBe("stopped");
  });

  it("stops this process's run even when the store cannot record the request; stop() reports the failure", async () => {
    class StopsDown extends InMemoryCheckpointer {
      override async requestStop(): Promise<never> {
        throw new Error("store down");
      }
    }
    const { app, entered, gate } = gatedGraph(new StopsDown());
    const run = settle(app.invoke({}, { threadId: "t" }));
    await entered.promise;

    await expect(app.stop({ threadId: "t" })).rejects.toThrow("store down");
    gate.resolve(); // a run that was not aborted would now complete

    const outcome = await run;
    expect(outcome.ok && outcome.value.status).toBe("stopped");
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "stopped",
      currentNode: "WAIT",
    });
  });

  it.each([
    ["a storage failure", () => new Error("disk full"), null, "failed", 0],
    [
      "a version conflict",
      () => new StaleStateError("t", 2, 3),
      "STORAGE_CONFLICT_001",
      "running",
      1,
    ],
  ] as const)(
    "reports %s of the stopped write as a failure: error event, rejected invoke",
    async (_, makeError, code, status, conflicts) => {
      class StoppedWriteFails extends InMemoryCheckpointer {
        override async putCheckpoint(write: CheckpointWrite): Promise<number> {
          if (write.status === "stopped") throw makeError();
          return super.putCheckpoint(write);
        }
      }
      const meter = testMeter();
      const { app, entered } = gatedGraph(new StoppedWriteFails(), { meter: meter.meter });
      const message = makeError().message;

      const streamed = collectEvents(app.stream({}, { threadId: "s" }));
      await entered.promise;
      await app.stop({ threadId: "s" });
      const { events, error } = await streamed;
      // A conflict that ends a run also says what the run had committed, after the store's text.
      expect((error as Error).message.startsWith(message)).toBe(true);
      expect(events.at(-1)).toEqual({ type: "error", code, message: (error as Error).message });
      expect(ofType(events, "run_end")).toEqual([]);

      const { app: other, entered: otherEntered } = gatedGraph(app.checkpointer, {
        meter: meter.meter,
      });
      const invoked = settle(other.invoke({}, { threadId: "i" }));
      await otherEntered.promise;
      await other.stop({ threadId: "i" });
      const outcome = await invoked;
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && (outcome.error as Error).message.startsWith(message)).toBe(true);

      for (const threadId of ["s", "i"]) {
        expect((await app.getState({ threadId }))?.status).toBe(status);
      }
      expect(await meter.sum("tenxgraph.storage.conflicts")).toBe(2 * conflicts);
      expect(await meter.sum("tenxgraph.run.stops")).toBe(0);
    },
  );
});
