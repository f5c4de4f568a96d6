import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Message } from "../messages/message.js";
import { interrupt } from "../node/interrupt.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  callsTurn,
  collectEvents,
  deferred,
  recordingLogger,
  settle,
  toolMessages,
  untilAborted,
} from "../support/helpers.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { Send } from "../definition/send.js";
import { StateGraph } from "./state-graph.js";
import { Subgraph } from "./subgraph.js";

interface Notes extends BaseState {
  notes: string[];
  topic: string;
}

/** A worker graph: DRAFT asks whether to go on, then notes the answer. */
function askingWorker() {
  return new StateGraph<Notes>({ initialState: { notes: [], topic: "" } })
    .addNode("DRAFT", (state) => {
      const answer = interrupt<string>(`go on with ${state.topic}?`);
      return { notes: [...state.notes, `drafted ${state.topic}: ${answer}`] };
    })
    .addEdge("DRAFT", END)
    .setEntryPoint("DRAFT")
    .compile({ logger: recordingLogger() });
}

describe("subgraphs", () => {
  it("runs a compiled graph as a node on the keys both states share", async () => {
    const worker = new StateGraph<Notes>({ initialState: { notes: [], topic: "" } })
      .addNode("WRITE", (state) => ({
        notes: [...state.notes, `wrote on ${state.topic}`],
        messages: [Message.assistant(`about ${state.topic}`)],
      }))
      .addEdge("WRITE", END)
      .setEntryPoint("WRITE")
      .compile({ logger: recordingLogger() });
    const store = new InMemoryCheckpointer();
    const app = new StateGraph<Notes & { other: number }>({
      initialState: { notes: ["start"], topic: "tides", other: 1 },
    })
      .addNode("WORKER", worker)
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });

    expect(result.state.notes).toEqual(["start", "wrote on tides"]);
    expect(result.state.other).toBe(1);
    expect(result.state.messages.map((m) => Message.text(m))).toEqual(["go", "about tides"]);
    // The child ran on a thread of its own in the parent's store.
    expect(await store.getCheckpoint("t|WORKER@0")).toMatchObject({ status: "completed" });
  });

  it("streams the child's node events with the node's namespace, not its run's own events", async () => {
    const worker = new StateGraph<Notes>({ initialState: { notes: [], topic: "" } })
      .addNode("WRITE", () => Message.assistant("from the child"))
      .addEdge("WRITE", END)
      .setEntryPoint("WRITE")
      .compile({ logger: recordingLogger() });
    const app = new StateGraph<Notes>({ initialState: { notes: [], topic: "" } })
      .addNode("WORKER", worker)
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ logger: recordingLogger() });

    const { events } = await collectEvents(app.stream({ messages: [] }, { threadId: "t" }));

    const inner = events.filter((event) => "namespace" in event);
    expect(inner.map((event) => [event.type, (event as { node?: string }).node])).toEqual([
      ["node_start", "WRITE"],
      ["message", "WRITE"],
    ]);
    expect(inner.every((event) => (event as { namespace?: string }).namespace === "WORKER")).toBe(
      true,
    );
    // The parent's own events: one run, its node, and the child's message once more as the
    // parent's step appends it.
    expect(events.filter((event) => event.type === "run_start")).toHaveLength(1);
    expect(
      events.filter((event) => event.type === "message" && !("namespace" in event)),
    ).toHaveLength(1);
  });

  it("maps state in and out with Subgraph({ input, output })", async () => {
    const worker = new StateGraph<Notes>({ initialState: { notes: [], topic: "" } })
      .addNode("WRITE", (state) => ({ notes: [`wrote on ${state.topic}`] }))
      .addEdge("WRITE", END)
      .setEntryPoint("WRITE")
      .compile({ logger: recordingLogger() });
    interface Parent extends BaseState {
      subject: string;
      report: string;
    }
    const app = new StateGraph<Parent>({ initialState: { subject: "kelp", report: "" } })
      .addNode(
        "WORKER",
        new Subgraph<Parent, Notes>(worker, {
          input: (state) => ({ topic: state.subject }),
          output: (child) => ({ report: child.notes.join("; ") }),
        }),
      )
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ logger: recordingLogger() });

    const result = await app.invoke({ messages: [] }, { threadId: "t" });
    expect(result.state.report).toBe("wrote on kelp");
  });

  it("an interrupt inside pauses the parent, and is answered through the parent by id", async () => {
    const app = new StateGraph<Notes>({ initialState: { notes: [], topic: "eels" } })
      .addNode("WORKER", askingWorker())
      .addNode("AFTER", (state) => ({ notes: [...state.notes, "after"] }))
      .addEdge("WORKER", "AFTER")
      .addEdge("AFTER", END)
      .setEntryPoint("WORKER")
      .compile({ logger: recordingLogger() });

    const paused = await app.invoke({ messages: [] }, { threadId: "t" });
    expect(paused.status).toBe("interrupted");
    expect(paused.interrupts).toEqual([
      { id: "WORKER|DRAFT:0", value: "go on with eels?", node: "WORKER" },
    ]);

    const inspected = await app.getState({ threadId: "t", subgraphs: true });
    expect(inspected?.subgraphs?.WORKER).toMatchObject({
      status: "interrupted",
      currentNode: "DRAFT",
      interrupts: [{ id: "DRAFT:0", value: "go on with eels?" }],
      values: { topic: "eels", notes: [] },
    });
    expect((await app.getState({ threadId: "t" }))?.subgraphs).toBeUndefined();

    const done = await app.invoke(
      { resume: "yes", interruptId: "WORKER|DRAFT:0" },
      { threadId: "t" },
    );
    expect(done.status).toBe("completed");
    expect(done.state.notes).toEqual(["drafted eels: yes", "after"]);
  });

  it("interrupts of two Send branches' children are answered at once with a map of interrupt ids", async () => {
    const app = new StateGraph<Notes>({
      reducers: { notes: (current, update) => [...current, ...update] },
      initialState: { notes: [], topic: "" },
    })
      .addNode("PLAN", () => ({}))
      .addNode(
        "WORKER",
        new Subgraph<Notes, Notes>(askingWorker(), { output: (child) => ({ notes: child.notes }) }),
      )
      .addConditionalEdges("PLAN", () =>
        ["tides", "kelp"].map((topic) => new Send("WORKER", { topic })),
      )
      .addEdge("WORKER", END)
      .setEntryPoint("PLAN")
      .compile({ logger: recordingLogger() });

    const paused = await app.invoke({ messages: [] }, { threadId: "t" });
    expect(paused.interrupts.map((i) => [i.id, i.value])).toEqual([
      ["WORKER:0|DRAFT:0", "go on with tides?"],
      ["WORKER:1|DRAFT:0", "go on with kelp?"],
    ]);

    const done = await app.invoke(
      { resume: { "WORKER:0|DRAFT:0": "yes", "WORKER:1|DRAFT:0": "no" } },
      { threadId: "t" },
    );
    expect(done.status).toBe("completed");
    expect(done.state.notes).toEqual(["drafted tides: yes", "drafted kelp: no"]);
  });

  it("each Send to a subgraph runs a child of its own, keyed by the Send's namespace", async () => {
    const worker = new StateGraph<Notes>({ initialState: { notes: [], topic: "" } })
      .addNode("WRITE", (state) => ({ notes: [`wrote on ${state.topic}`] }))
      .addEdge("WRITE", END)
      .setEntryPoint("WRITE")
      .compile({ logger: recordingLogger() });
    const store = new InMemoryCheckpointer();
    const app = new StateGraph<Notes>({
      reducers: { notes: (current, update) => [...current, ...update] },
      initialState: { notes: [], topic: "" },
    })
      .addNode("PLAN", () => ({}))
      .addNode(
        "WORKER",
        new Subgraph<Notes, Notes>(worker, { output: (child) => ({ notes: child.notes }) }),
      )
      .addConditionalEdges("PLAN", () =>
        ["tides", "kelp"].map((topic) => new Send("WORKER", { topic })),
      )
      .addEdge("WORKER", END)
      .setEntryPoint("PLAN")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const result = await app.invoke({ messages: [] }, { threadId: "t" });

    expect(result.state.notes).toEqual(["wrote on tides", "wrote on kelp"]);
    expect((await store.getCheckpoint("t|WORKER:0@1"))?.values.topic).toBe("tides");
    expect((await store.getCheckpoint("t|WORKER:1@1"))?.values.topic).toBe("kelp");
  });

  it("a stop of the parent reaches inside: both are left stopped, and continuing the parent continues the child", async () => {
    const hanging = deferred();
    let attempts = 0;
    const worker = new StateGraph()
      .addNode("WAIT", async (_state, ctx) => {
        attempts += 1;
        if (attempts > 1) return Message.assistant("waited");
        hanging.resolve();
        return untilAborted(ctx.signal);
      })
      .addEdge("WAIT", END)
      .setEntryPoint("WAIT")
      .compile({ logger: recordingLogger() });
    const store = new InMemoryCheckpointer();
    const app = new StateGraph()
      .addNode("PREP", () => ({}))
      .addNode("WORKER", worker)
      .addEdge("PREP", "WORKER")
      .addEdge("WORKER", END)
      .setEntryPoint("PREP")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const running = app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });
    await hanging.promise;
    await app.stop({ threadId: "t" });

    expect((await running).status).toBe("stopped");
    expect(await store.getCheckpoint("t")).toMatchObject({
      status: "stopped",
      currentNode: "WORKER",
    });
    expect(await store.getCheckpoint("t|WORKER@1")).toMatchObject({
      status: "stopped",
      currentNode: "WAIT",
    });
    const continued = await app.invoke(null, { threadId: "t" });
    expect(continued.status).toBe("completed");
    expect(Message.text(continued.state.messages.at(-1)!)).toBe("waited");
  });

  it("after a crash inside the child, a recorded tool call replays and is never run again", async () => {
    const runs = { charge: 0, slow: 0 };
    const counted = (name: "charge" | "slow", ms: number) =>
      tool({
        name,
        description: name,
        schema: z.object({}),
        execute: async () => {
          runs[name] += 1;
          await new Promise((resolve) => setTimeout(resolve, ms));
          return `${name} done`;
        },
      });
    const worker = new StateGraph()
      .addNode("MODEL", () =>
        callsTurn("m-1", [
          ["charge", {}],
          ["slow", {}],
        ])(),
      )
      .addNode("TOOLS", new ToolNode([counted("charge", 0), counted("slow", 30)]))
      .addEdge("MODEL", "TOOLS")
      .addEdge("TOOLS", END)
      .setEntryPoint("MODEL")
      .compile({ logger: recordingLogger() });
    const store = new InMemoryCheckpointer();
    const faults = new FaultPoints();
    const app = new StateGraph()
      .addNode("WORKER", worker)
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ checkpointer: store, logger: recordingLogger(), faultPoints: faults });
    // The child "dies" writing its tool step, and its failure write dies too: charge, which
    // returned first, was recorded on its own; slow's result, riding in the lost write, is
    // recorded on its own as the run ends (the in-process half of a crash).
    let dying = false;
    faults.arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      () => {
        dying = true;
        throw new Error("crash in the child's tool step");
      },
      { when: (at) => at.threadId === "t|WORKER@0" && (dying || at.node === "END"), times: 2 },
    );

    const crashed = await settle(
      app.invoke({ messages: [Message.user("pay")] }, { threadId: "t" }),
    );
    expect(crashed.ok).toBe(false);
    expect(runs).toEqual({ charge: 1, slow: 1 });

    const continued = await app.invoke(null, { threadId: "t" });

    expect(continued.status).toBe("completed");
    // The parent's step runs the child again, which continues at its tool step: both calls
    // replay from the child's ledger instead of running again.
    expect(runs).toEqual({ charge: 1, slow: 1 });
    expect(toolMessages(continued.state).map((m) => Message.text(m))).toEqual([
      "charge done",
      "slow done",
    ]);
  });
});
