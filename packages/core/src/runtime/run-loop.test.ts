import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GraphRecursionError, StaleStateError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { CompileOptions } from "../graph/compile-options.js";
import { END } from "../definition/edges.js";
import type { NodeFunction } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  deferred,
  RecordingCheckpointer,
  recordingLogger,
  settle,
  testMeter,
  untilAborted,
} from "../support/helpers.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import { interrupt } from "../node/interrupt.js";

interface TraceState extends BaseState {
  trace: string[];
}

/** A node that appends its name to `trace` and says who ran it. */
const traced =
  (name: string): NodeFunction<TraceState> =>
  (state, ctx) => ({
    trace: [...state.trace, name],
    messages: [Message.assistant(`${name}@${ctx.runId}`)],
  });

/** Nodes run in the order given, the last one to END. */
function linear(
  nodes: [string, NodeFunction<TraceState>][],
  options: CompileOptions & { checkpointer: Checkpointer },
) {
  const graph = new StateGraph<TraceState>({ initialState: { trace: [] } });
  nodes.forEach(([name, node], i) => {
    graph.addNode(name, node).addEdge(name, nodes[i + 1]?.[0] ?? END);
  });
  return graph.setEntryPoint(nodes[0]![0]).compile({ logger: recordingLogger(), ...options });
}

function abc(checkpointer: Checkpointer, options: CompileOptions = {}) {
  return linear(
    [
      ["A", traced("A")],
      ["B", traced("B")],
      ["C", traced("C")],
    ],
    { checkpointer, ...options },
  );
}

/** The fields of a recorded write that describe the step. */
const summary = (store: RecordingCheckpointer) =>
  store.writes.map((w) => ({
    expectedVersion: w.expectedVersion,
    committedVersion: w.committedVersion,
    step: w.step,
    currentNode: w.currentNode,
    status: w.status,
    newMessages: w.newMessages.map((m) => Message.text(m).split("@")[0]),
  }));

describe("versioned writes", () => {
  it("writes once at the start and once per step: version + 1, currentNode = next, only new messages", async () => {
    const store = new RecordingCheckpointer();
    const app = abc(store);
    const result = await app.invoke({ messages: [Message.user("q")] }, { threadId: "t" });

    expect(summary(store)).toEqual([
      {
        expectedVersion: 0,
        committedVersion: 1,
        step: 0,
        currentNode: "A",
        status: "running",
        newMessages: ["q"],
      },
      {
        expectedVersion: 1,
        committedVersion: 2,
        step: 1,
        currentNode: "B",
        status: "running",
        newMessages: ["A"],
      },
      {
        expectedVersion: 2,
        committedVersion: 3,
        step: 2,
        currentNode: "C",
        status: "running",
        newMessages: ["B"],
      },
      {
        expectedVersion: 3,
        committedVersion: 4,
        step: 3,
        currentNode: null,
        status: "completed",
        newMessages: ["C"],
      },
    ]);
    expect(store.writes.map((w) => w.values)).toEqual([
      { trace: [] },
      { trace: ["A"] },
      { trace: ["A", "B"] },
      { trace: ["A", "B", "C"] },
    ]);
    expect(result.version).toBe(4);
    expect((await app.getState({ threadId: "t" }))?.version).toBe(4);

    // The next turn sends only its own input at the start.
    await app.invoke({ messages: [Message.user("again")] }, { threadId: "t" });
    expect(summary(store)[4]).toMatchObject({
      expectedVersion: 4,
      currentNode: "A",
      newMessages: ["again"],
    });
    expect(store.writes).toHaveLength(8);
  });

  it("commits a step before the next node runs", async () => {
    const store = new InMemoryCheckpointer();
    const seen: unknown[] = [];
    const app = linear(
      [
        ["A", traced("A")],
        [
          "B",
          async () => {
            const stored = await store.getCheckpoint("t");
            seen.push({
              version: stored?.version,
              node: stored?.currentNode,
              count: stored?.messageCount,
            });
          },
        ],
      ],
      { checkpointer: store },
    );
    await app.invoke({ messages: [Message.user("q")] }, { threadId: "t" });
    expect(seen).toEqual([{ version: 2, node: "B", count: 2 }]);
  });

  it("durableCheckpointEveryStep: false writes only the start and the terminal point", async () => {
    const store = new RecordingCheckpointer();
    const app = abc(store);
    const result = await app.invoke(
      { messages: [Message.user("q")] },
      { threadId: "t", durableCheckpointEveryStep: false },
    );
    expect(result.status).toBe("completed");
    // The run creates the thread, so its start is written twice: its run lease is claimed in
    // between (a new thread has no row to hold it before), then confirmed (see run-lease.ts).
    const start = { step: 0, currentNode: "A", status: "running" };
    expect(summary(store)).toEqual([
      { expectedVersion: 0, committedVersion: 1, ...start, newMessages: ["q"] },
      { expectedVersion: 1, committedVersion: 2, ...start, newMessages: [] },
      {
        expectedVersion: 2,
        committedVersion: 3,
        step: 3,
        currentNode: null,
        status: "completed",
        newMessages: ["A", "B", "C"],
      },
    ]);
    expect((await app.getState({ threadId: "t" }))?.values.trace).toEqual(["A", "B", "C"]);
  });

  it("durableCheckpointEveryStep: false still writes a failure durably, at the failed node", async () => {
    const store = new RecordingCheckpointer();
    const app = linear(
      [
        ["A", traced("A")],
        ["B", traced("B")],
        [
          "C",
          () => {
            throw new Error("C broke");
          },
        ],
      ],
      { checkpointer: store },
    );
    const run = app.invoke({}, { threadId: "t", durableCheckpointEveryStep: false });
    await expect(run).rejects.toThrow("C broke");
    expect(summary(store).map((w) => [w.currentNode, w.status, w.newMessages])).toEqual([
      ["A", "running", []],
      ["A", "running", []], // the start again, once the run lease of the new thread is held
      ["C", "failed", ["A", "B"]],
    ]);
  });
});

describe("recursion limit", () => {
  it("rejects with GraphRecursionError RECURSION_001 and leaves the thread failed", async () => {
    let calls = 0;
    const app = new StateGraph()
      .addNode("LOOP", () => void (calls += 1))
      .addEdge("LOOP", "LOOP")
      .setEntryPoint("LOOP")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    const error = await app
      .invoke({}, { threadId: "t", recursionLimit: 3 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphRecursionError);
    expect(error).toMatchObject({ code: "RECURSION_001", recursionLimit: 3, threadId: "t" });
    expect(calls).toBe(3);
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "failed",
      currentNode: "LOOP",
      step: 3,
    });
  });

  it("counts the steps of one run: invoke(null) gets a fresh budget", async () => {
    let steps = 0;
    const app = new StateGraph()
      .addNode("LOOP", () => void (steps += 1))
      .addConditionalEdges("LOOP", () => (steps < 5 ? "LOOP" : END))
      .setEntryPoint("LOOP")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    await expect(app.invoke({}, { threadId: "t", recursionLimit: 3 })).rejects.toMatchObject({
      code: "RECURSION_001",
    });
    const result = await app.invoke(null, { threadId: "t", recursionLimit: 3 });
    expect(result.status).toBe("completed");
    expect(steps).toBe(5);
  });
});

describe("continuing with invoke(null)", () => {
  it("continues a failed run from its current node, without re-running earlier nodes", async () => {
    const store = new InMemoryCheckpointer();
    const calls = { A: 0, B: 0, C: 0 };
    const count =
      (name: keyof typeof calls, fail = false): NodeFunction<TraceState> =>
      (state, ctx) => {
        calls[name] += 1;
        if (fail && calls[name] === 1) throw new Error(`${name} failed once`);
        return traced(name)(state, ctx);
      };
    const app = linear(
      [
        ["A", count("A")],
        ["B", count("B", true)],
        ["C", count("C")],
      ],
      {
        checkpointer: store,
      },
    );

    await expect(app.invoke({ messages: [Message.user("q")] }, { threadId: "t" })).rejects.toThrow(
      "B failed once",
    );
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "failed",
      currentNode: "B",
      values: { trace: ["A"] },
    });

    const result = await app.invoke(null, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(result.state.trace).toEqual(["A", "B", "C"]);
    expect(calls).toEqual({ A: 1, B: 2, C: 1 });
    expect(result.state.messages.map((m) => Message.text(m).split("@")[0])).toEqual([
      "q",
      "A",
      "B",
      "C",
    ]);
  });

  it("THREAD_001 on a thread that does not exist", async () => {
    const app = abc(new InMemoryCheckpointer());
    const error = await app.invoke(null, { threadId: "nope" }).catch((e: unknown) => e);
    expect(isTenxgraphError(error) && error.code).toBe("THREAD_001");
    expect(await app.getState({ threadId: "nope" })).toBeNull();
  });

  it("on a completed thread returns it as it is, running nothing and writing nothing", async () => {
    const store = new RecordingCheckpointer();
    const app = abc(store);
    const first = await app.invoke({}, { threadId: "t" });
    const again = await app.invoke(null, { threadId: "t" });
    expect(again.status).toBe("completed");
    expect(again.version).toBe(first.version);
    expect(again.state.trace).toEqual(["A", "B", "C"]);
    expect(store.writes).toHaveLength(4);
  });

  it("resumes from the node whose step write was lost, replaying the tool from the ledger", async () => {
    const store = new InMemoryCheckpointer();
    let charges = 0;
    const charge = tool({
      name: "charge",
      description: "Charge a card",
      schema: z.object({ cents: z.number() }),
      execute: async ({ cents }) => `charged ${cents} (#${++charges})`,
    });
    const faults = new FaultPoints();
    const build = (faultPoints?: FaultPoints) =>
      new StateGraph()
        .addNode(
          "MAIN",
          new ScriptedModel([{ toolCalls: [{ name: "charge", args: { cents: 500 } }] }, "done"]),
        )
        .addNode("TOOL", new ToolNode([charge]))
        .addConditionalEdges("MAIN", (s) => {
          const last = s.messages.at(-1);
          return last?.role === "assistant" && last.toolCalls ? "TOOL" : END;
        })
        .addEdge("TOOL", "MAIN")
        .setEntryPoint("MAIN")
        .compile({ checkpointer: store, logger: recordingLogger(), faultPoints });
    // Writes: start (1), after MAIN (2), after TOOL (3). The process "dies" at the third, and
    // the failure write that follows dies too, as it would in a crash.
    faults.arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      () => {
        throw new Error("crash before the step write");
      },
      { when: () => faults.hits(FAULT_POINTS.STEP_BEFORE_WRITE) >= 3, times: 2 },
    );
    await expect(
      build(faults).invoke({ messages: [Message.user("pay")] }, { threadId: "t" }),
    ).rejects.toThrow("crash before the step write");
    expect(charges).toBe(1);
    expect(await store.getCheckpoint("t")).toMatchObject({
      status: "running",
      currentNode: "TOOL",
      version: 2,
    });
    expect((await store.listCalls("t")).map((e) => e.status)).toEqual(["completed"]);

    const result = await build().invoke(null, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(charges).toBe(1);
    expect(result.state.messages.map((m) => [m.role, Message.text(m)])).toEqual([
      ["user", "pay"],
      ["assistant", ""],
      ["tool", "charged 500 (#1)"],
      ["assistant", "done"],
    ]);
  });

  it("keeps the thread at the node when only the step write fails, and records the failure", async () => {
    const store = new InMemoryCheckpointer();
    const faults = new FaultPoints();
    const calls: string[] = [];
    const app = linearApp(store, faults, calls);
    // Writes: start (1), after A (2). The second write throws once; the failure write succeeds.
    faults.arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      () => {
        throw new Error("store blip");
      },
      { when: () => faults.hits(FAULT_POINTS.STEP_BEFORE_WRITE) === 2 },
    );
    await expect(app.invoke({ messages: [Message.user("go")] }, { threadId: "t" })).rejects.toThrow(
      "store blip",
    );
    expect(await store.getCheckpoint("t")).toMatchObject({
      status: "failed",
      currentNode: "A",
      step: 0,
    });
    expect(await store.listMessages("t")).toHaveLength(1);
    const result = await app.invoke(null, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(calls).toEqual(["A", "A", "B"]);
  });
});

function linearApp(store: Checkpointer, faultPoints: FaultPoints, calls: string[]) {
  const node = (name: string) => () => {
    calls.push(name);
    return Message.assistant(name);
  };
  return new StateGraph()
    .addNode("A", node("A"))
    .addNode("B", node("B"))
    .addEdge("A", "B")
    .addEdge("B", END)
    .setEntryPoint("A")
    .compile({ checkpointer: store, logger: recordingLogger(), faultPoints });
}

describe("concurrent executions", () => {
  it("StaleStateError when another execution committed between this run's read and its write", async () => {
    const store = new InMemoryCheckpointer();
    const meter = testMeter();
    const other = abc(store);
    let runOfFirst = "";
    const faults = new FaultPoints().arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      async (at) => {
        runOfFirst = at.runId;
        await other.invoke({ messages: [Message.user("other")] }, { threadId: "t" });
      },
      { when: (at) => at.node === "B", times: 1 },
    );
    const first = abc(store, { faultPoints: faults, meter: meter.meter });

    const error = await first
      .invoke({ messages: [Message.user("mine")] }, { threadId: "t" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleStateError);
    expect(error).toMatchObject({
      code: "STORAGE_CONFLICT_001",
      expectedVersion: 1,
      actualVersion: 5,
    });
    expect(await meter.sum("tenxgraph.storage.conflicts")).toBe(1);

    // Nothing of the refused step landed; the other execution's writes stand.
    const state = await first.getState({ threadId: "t" });
    expect(state).toMatchObject({
      version: 5,
      status: "completed",
      values: { trace: ["A", "B", "C"] },
    });
    const texts = state!.values.messages.map((m) => Message.text(m));
    expect(texts.slice(0, 2)).toEqual(["mine", "other"]);
    expect(texts.filter((t) => t.includes(runOfFirst))).toEqual([]);
  });

  it("of two runs started from one version, the second fails at its start write, before any node", async () => {
    const store = new InMemoryCheckpointer();
    const gate = deferred();
    const entered = deferred();
    const calls = { B: 0, C: 0 };
    const app = linear(
      [
        ["A", traced("A")],
        [
          "B",
          async (state, ctx) => {
            calls.B += 1;
            if (calls.B === 1) throw new Error("B failed once");
            entered.resolve();
            await gate.promise;
            return traced("B")(state, ctx);
          },
        ],
        ["C", (state, ctx) => ((calls.C += 1), traced("C")(state, ctx))],
      ],
      { checkpointer: store },
    );
    await expect(app.invoke({}, { threadId: "t" })).rejects.toThrow("B failed once");

    const runs = [
      settle(app.invoke(null, { threadId: "t" })),
      settle(app.invoke(null, { threadId: "t" })),
    ];
    await entered.promise;
    const loser = await Promise.race(runs);
    expect(loser.ok).toBe(false);
    expect(!loser.ok && loser.error).toMatchObject({ code: "STORAGE_CONFLICT_001" });
    expect(calls.B).toBe(2);

    gate.resolve();
    const outcomes = await Promise.all(runs);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(calls).toEqual({ B: 2, C: 1 });
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "completed",
      values: { trace: ["A", "B", "C"] },
    });
  });

  it("a run held inside a node loses to a turn committed meanwhile", async () => {
    const store = new InMemoryCheckpointer();
    const gate = deferred();
    const entered = deferred();
    const slow = linear(
      [
        [
          "A",
          async (state, ctx) => (entered.resolve(), await gate.promise, traced("A")(state, ctx)),
        ],
        ["B", traced("B")],
      ],
      { checkpointer: store },
    );
    const fast = abc(store);
    const held = settle(slow.invoke({ messages: [Message.user("slow")] }, { threadId: "t" }));
    await entered.promise;
    const quick = await fast.invoke({ messages: [Message.user("fast")] }, { threadId: "t" });
    gate.resolve();
    const outcome = await held;
    expect(!outcome.ok && outcome.error).toMatchObject({
      code: "STORAGE_CONFLICT_001",
      expectedVersion: 1,
      actualVersion: quick.version,
    });
    expect((await slow.getState({ threadId: "t" }))?.version).toBe(quick.version);
  });
});

describe("inputs and threads", () => {
  it("THREAD_002: new input (or a bare continue) while the thread waits for an interrupt answer", async () => {
    const store = new RecordingCheckpointer();
    const app = linear([["ASK", () => void interrupt({ question: "ok?" })]], {
      checkpointer: store,
    });
    const paused = await app.invoke({}, { threadId: "t" });
    expect(paused.status).toBe("interrupted");
    const writes = store.writes.length;

    for (const input of [{ messages: [Message.user("ignore that")] }, null]) {
      const error = await app.invoke(input, { threadId: "t" }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "THREAD_002" });
      expect((error as Error).message).toContain(paused.interrupts[0]!.id);
    }
    expect(store.writes).toHaveLength(writes);
    expect((await app.getState({ threadId: "t" }))?.status).toBe("interrupted");
  });

  it.each(["stopped", "failed"] as const)(
    "a %s run that left no tool call pending may be left behind by a new turn",
    async (status) => {
      const store = new RecordingCheckpointer();
      const entered = deferred();
      let runs = 0;
      const app = linear(
        [
          [
            "WORK",
            (state, ctx) => {
              runs += 1;
              if (runs === 1 && status === "failed") throw new Error("work failed");
              if (runs === 1) {
                entered.resolve();
                return untilAborted(ctx.signal);
              }
              return { trace: [...state.trace, "WORK"] };
            },
          ],
        ],
        { checkpointer: store },
      );
      const first = settle(app.invoke({ messages: [Message.user("one")] }, { threadId: "t" }));
      if (status === "stopped") {
        await entered.promise;
        await app.stop({ threadId: "t" });
      }
      await first;
      expect(await app.getState({ threadId: "t" })).toMatchObject({ status, currentNode: "WORK" });

      const next = await app.invoke({ messages: [Message.user("two")] }, { threadId: "t" });
      expect(next.status).toBe("completed");
      expect(next.state.messages.map((m) => m.content)).toEqual(["one", "two"]);
      expect(next.state.trace).toEqual(["WORK"]);
    },
  );

  it.each(["stopped", "failed", "crashed"] as const)(
    "THREAD_003: new input while tool calls are unanswered (%s run) is refused until invoke(null)",
    async (how) => {
      const store = new RecordingCheckpointer();
      const faults = new FaultPoints();
      const entered = deferred();
      let executions = 0;
      const charge = tool({
        name: "charge",
        description: "Charge a card",
        schema: z.object({}),
        execute: async (_args, ctx) => {
          executions += 1;
          if (executions === 1 && how === "stopped") {
            entered.resolve();
            await untilAborted(ctx.signal);
          }
          return "charged";
        },
      });
      if (how === "failed") {
        faults.arm(
          FAULT_POINTS.TOOL_AFTER_RETURN,
          () => {
            throw new Error("tool node failed");
          },
          { times: 1 },
        );
      }
      if (how === "crashed") {
        // The tools step's write and the failure write that follows both die, as in a crash.
        faults.arm(
          FAULT_POINTS.STEP_BEFORE_WRITE,
          () => {
            throw new Error("crash");
          },
          { when: () => faults.hits(FAULT_POINTS.STEP_BEFORE_WRITE) >= 3, times: 2 },
        );
      }
      const app = new StateGraph()
        .addNode(
          "MAIN",
          new ScriptedModel([{ toolCalls: [{ name: "charge", args: {} }] }, "done", "again"]),
        )
        .addNode("TOOL", new ToolNode([charge]))
        .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
        .addEdge("TOOL", "MAIN")
        .setEntryPoint("MAIN")
        .compile({
          checkpointer: store,
          logger: recordingLogger(),
          faultPoints: faults,
          claimStaleAfterMs: 40,
          stopPollIntervalMs: 20,
        });
      const first = settle(app.invoke({ messages: [Message.user("pay")] }, { threadId: "t" }));
      if (how === "stopped") {
        await entered.promise;
        await app.stop({ threadId: "t" });
      }
      await first;
      expect((await app.getState({ threadId: "t" }))?.currentNode).toBe("TOOL");
      const writes = store.writes.length;

      const refused = await app
        .invoke({ messages: [Message.user("something else")] }, { threadId: "t" })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "THREAD_003", name: "InvalidRunError" });
      expect((refused as Error).message).toContain("invoke(null");
      expect(store.writes).toHaveLength(writes);

      expect((await app.invoke(null, { threadId: "t" })).status).toBe("completed");
      const next = await app.invoke(
        { messages: [Message.user("something else")] },
        { threadId: "t" },
      );
      expect(next.status).toBe("completed");
      expect(next.state.messages.map((m) => m.content).slice(-2)).toEqual([
        "something else",
        "again",
      ]);
    },
  );

  it("getState never mixes versions: a write landing while the transcript is read is left out", async () => {
    type MessagePage = { offset?: number; limit?: number; version?: number };
    class WriteDuringRead extends InMemoryCheckpointer {
      readonly pages: MessagePage[] = [];
      beforeNextPage?: () => Promise<unknown>;
      override async listMessages(threadId: string, page?: MessagePage) {
        const hook = this.beforeNextPage;
        this.beforeNextPage = undefined;
        await hook?.();
        this.pages.push({ ...page });
        return super.listMessages(threadId, page);
      }
    }
    const store = new WriteDuringRead();
    const app = linear([["A", traced("A")]], { checkpointer: store });
    const first = await app.invoke({ messages: [Message.user("one")] }, { threadId: "t" });
    store.beforeNextPage = () => app.invoke({ messages: [Message.user("two")] }, { threadId: "t" });

    const state = await app.getState({ threadId: "t" });

    expect(state?.version).toBe(first.version);
    expect(state?.values.messages.map((m) => m.content)).toEqual(["one", `A@${first.runId}`]);
    // getState's own page asked for no more than its checkpoint's messages.
    expect(store.pages.at(-1)).toEqual({ offset: 0, limit: 2, version: first.version });
    expect((await store.getCheckpoint("t"))?.messageCount).toBe(4);
  });

  it.each([
    ["a string", "hello"],
    ["an array", [Message.user("hi")]],
    ["messages that are not an array", { messages: "hi" }],
    [
      "a message without an id",
      { messages: [Message.user("ok"), { role: "user", content: "no id" }] },
    ],
  ])("INPUT_001 for %s, and no thread is created", async (_, input) => {
    const app = abc(new RecordingCheckpointer());
    const error = await app.invoke(input as never, { threadId: "t" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INPUT_001" });
    expect(await app.getState({ threadId: "t" })).toBeNull();
  });

  it("generates a threadId, with a warning, when none is given", async () => {
    const logger = recordingLogger();
    const app = abc(new InMemoryCheckpointer(), { logger });
    const result = await app.invoke({});
    expect(result.threadId).toMatch(/^[0-9a-f-]{36}$/);
    const warnings = logger.find("warn", "No threadId");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.fields.threadId).toBe(result.threadId);
    expect((await app.getState({ threadId: result.threadId }))?.status).toBe("completed");
  });

  it("keeps userId: on the thread, in node context, and across later runs that do not give it", async () => {
    const store = new InMemoryCheckpointer();
    const seen: (string | null)[] = [];
    const app = linear([["A", (_, ctx) => void seen.push(ctx.userId)]], { checkpointer: store });
    await app.invoke({}, { threadId: "t", userId: "customer-118" });
    await app.invoke({}, { threadId: "t" });
    expect(seen).toEqual(["customer-118", "customer-118"]);
    expect((await store.getCheckpoint("t"))?.userId).toBe("customer-118");
    expect((await store.listThreads({ userId: "customer-118" })).map((t) => t.threadId)).toEqual([
      "t",
    ]);
  });

  it("getState, getToolLedger and deleteThread", async () => {
    const lookup = tool({
      name: "lookup",
      description: "Look up an order",
      schema: z.object({ id: z.string() }),
      execute: ({ id }) => ({ id, status: "shipped" }),
    });
    const app = new StateGraph()
      .addNode(
        "MAIN",
        new ScriptedModel([{ toolCalls: [{ name: "lookup", args: { id: "7" } }] }, "shipped"]),
      )
      .addNode("TOOL", new ToolNode([lookup]))
      .addConditionalEdges("MAIN", (s) => (s.messages.length < 3 ? "TOOL" : END))
      .addEdge("TOOL", "MAIN")
      .setEntryPoint("MAIN")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    expect(await app.getState({ threadId: "t" })).toBeNull();
    expect(await app.getToolLedger({ threadId: "t" })).toEqual([]);

    const result = await app.invoke({ messages: [Message.user("where?")] }, { threadId: "t" });
    const state = await app.getState({ threadId: "t" });
    expect(state).toEqual({
      values: { messages: result.state.messages },
      version: result.version,
      currentNode: null,
      next: [],
      step: 3,
      status: "completed",
      interrupts: [],
      breakpoint: null,
      parentVersion: result.version - 1,
      node: "MAIN",
      runId: result.runId,
      createdAt: expect.any(String),
    });
    const issuer = result.state.messages[1]!;
    const ledger = await app.getToolLedger({ threadId: "t" });
    expect(ledger).toEqual([
      expect.objectContaining({
        key: `${issuer.id}:call_1`,
        toolName: "lookup",
        status: "completed",
        attempt: 1,
        startedAt: expect.any(String),
        completedAt: expect.any(String),
      }),
    ]);

    await app.deleteThread({ threadId: "t" });
    expect(await app.getState({ threadId: "t" })).toBeNull();
    expect(await app.getToolLedger({ threadId: "t" })).toEqual([]);
    // The id is free again: a new turn starts a new thread at version 1.
    const fresh = await app.invoke({ messages: [Message.user("again")] }, { threadId: "t" });
    expect(fresh.state.messages[0]?.content).toBe("again");
  });
});
