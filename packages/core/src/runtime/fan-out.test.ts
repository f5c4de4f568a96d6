import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import type { NodeFunction } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { Send } from "../definition/send.js";
import { StateGraph } from "../graph/state-graph.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { Message } from "../messages/message.js";
import { deferred, RecordingCheckpointer, recordingLogger, settle } from "../support/helpers.js";
import { interrupt } from "../node/interrupt.js";

interface Trace extends BaseState {
  trace: string[];
  last: string;
}

const concat = (current: string[], update: string[]) => [...current, ...update];

/** A node that appends its name to `trace` (a reducer) and says it ran. */
const traced =
  (name: string, wait?: Promise<void>): NodeFunction<Trace> =>
  async () => {
    await wait;
    return { trace: [name], messages: [Message.assistant(name)] };
  };

function graph() {
  return new StateGraph<Trace>({
    reducers: { trace: concat },
    initialState: { trace: [], last: "" },
  });
}

/** The steps each write was at, and the node it left the thread at. */
const steps = (store: RecordingCheckpointer) =>
  store.writes.map((w) => [w.step, w.currentNode, w.frontier?.tasks.map((t) => t.node) ?? null]);

describe("fan-out and join", () => {
  it("runs several edges' targets in one step and merges in declaration order, not finishing order", async () => {
    const store = new RecordingCheckpointer();
    const slowB = deferred();
    const app = graph()
      .addNode("A", traced("A"))
      .addNode("B", traced("B", slowB.promise))
      .addNode("C", async () => {
        const result = await traced("C")({} as Trace, {} as never);
        slowB.resolve(); // C finishes first; B's update still merges first.
        return result;
      })
      .addNode("D", traced("D"))
      .addEdge("A", "B")
      .addEdge("A", "C")
      .addEdge(["B", "C"], "D")
      .addEdge("D", END)
      .setEntryPoint("A")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });

    expect(result.status).toBe("completed");
    expect(result.state.trace).toEqual(["A", "B", "C", "D"]);
    expect(result.state.messages.map((m) => Message.text(m))).toEqual(["go", "A", "B", "C", "D"]);
    // One write per step, the fan-out step included: start, A, B+C, D.
    expect(steps(store)).toEqual([
      [0, "A", null],
      [1, "B", ["B", "C"]],
      [2, "D", null],
      [3, null, null],
    ]);
    expect(result.step).toBe(3);
  });

  it("a join waits for sources that finish in different steps, and runs once", async () => {
    const store = new RecordingCheckpointer();
    const runs: string[] = [];
    const node =
      (name: string): NodeFunction<Trace> =>
      () => {
        runs.push(name);
        return { trace: [name] };
      };
    const app = graph()
      .addNode("A", node("A"))
      .addNode("B", node("B"))
      .addNode("C", node("C"))
      .addNode("C2", node("C2"))
      .addNode("D", node("D"))
      .addEdge("A", "B")
      .addEdge("A", "C")
      .addEdge("C", "C2")
      .addEdge(["B", "C2"], "D")
      .addEdge("D", END)
      .setEntryPoint("A")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });

    expect(result.state.trace).toEqual(["A", "B", "C", "C2", "D"]);
    expect(runs).toEqual(["A", "B", "C", "C2", "D"]);
    // After B and C, the join remembers B while C2 runs alone.
    expect(store.writes[2]!.frontier).toEqual({ tasks: [{ node: "C2" }], joins: { D: ["B"] } });
  });

  it("a node reached by two edges in one step runs once", async () => {
    const runs: string[] = [];
    const app = graph()
      .addNode("A", () => ({ trace: ["A"] }))
      .addNode("B", () => ({ trace: ["B"] }))
      .addNode("C", () => ({ trace: ["C"] }))
      .addNode("D", () => {
        runs.push("D");
        return { trace: ["D"] };
      })
      .addEdge("A", "B")
      .addEdge("A", "C")
      .addEdge("B", "D")
      .addEdge("C", "D")
      .addEdge("D", END)
      .setEntryPoint("A")
      .compile({ logger: recordingLogger() });

    const result = await app.invoke({ messages: [] }, { threadId: "t" });
    expect(result.state.trace).toEqual(["A", "B", "C", "D"]);
    expect(runs).toEqual(["D"]);
  });

  it("a field without a reducer written differently by two branches keeps the later branch's, with a warning", async () => {
    const logger = recordingLogger();
    const app = graph()
      .addNode("A", () => ({}))
      .addNode("B", () => ({ last: "B" }))
      .addNode("C", () => ({ last: "C" }))
      .addEdge("A", "B")
      .addEdge("A", "C")
      .addEdge("B", END)
      .addEdge("C", END)
      .setEntryPoint("A")
      .compile({ logger });

    const result = await app.invoke({ messages: [] }, { threadId: "t" });

    expect(result.state.last).toBe("C");
    const [warning] = logger.find("warn", "state field 'last'");
    expect(warning?.fields).toMatchObject({ field: "last", tasks: ["B#0", "C#1"] });
  });

  it("a failing branch fails the step after its sibling settled; continuing runs the whole step again", async () => {
    const store = new RecordingCheckpointer();
    let failures = 1;
    const app = graph()
      .addNode("A", () => ({ trace: ["A"] }))
      .addNode("B", () => ({ trace: ["B"] }))
      .addNode("C", () => {
        if (failures-- > 0) throw new Error("C broke");
        return { trace: ["C"] };
      })
      .addEdge("A", "B")
      .addEdge("A", "C")
      .addEdge("B", END)
      .addEdge("C", END)
      .setEntryPoint("A")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const failed = await settle(app.invoke({ messages: [] }, { threadId: "t" }));
    expect(failed.ok).toBe(false);
    const stuck = await store.getCheckpoint("t");
    expect(stuck).toMatchObject({ status: "failed", values: { trace: ["A"] } });
    expect(stuck?.frontier?.tasks).toEqual([{ node: "B" }, { node: "C" }]);

    const continued = await app.invoke(null, { threadId: "t" });
    expect(continued.state.trace).toEqual(["A", "B", "C"]);
  });
});

describe("fan-out interrupts", () => {
  it("pauses with every branch's interrupt; each answer is given by id, then the step completes", async () => {
    const app = graph()
      .addNode("A", () => ({}))
      .addNode("B", () => ({ trace: [`B:${interrupt<string>("b?")}`] }))
      .addNode("C", () => ({ trace: [`C:${interrupt<string>("c?")}`] }))
      .addEdge("A", "B")
      .addEdge("A", "C")
      .addEdge("B", END)
      .addEdge("C", END)
      .setEntryPoint("A")
      .compile({ logger: recordingLogger() });

    const paused = await app.invoke({ messages: [] }, { threadId: "t" });
    expect(paused.status).toBe("interrupted");
    expect(paused.interrupts.map((i) => [i.id, i.node, i.value])).toEqual([
      ["B:1", "B", "b?"],
      ["C:1", "C", "c?"],
    ]);

    const half = await app.invoke({ resume: "yes", interruptId: "C:1" }, { threadId: "t" });
    expect(half.status).toBe("interrupted");
    expect(half.interrupts.map((i) => i.id)).toEqual(["B:1"]);
    const done = await app.invoke({ resume: "ok", interruptId: "B:1" }, { threadId: "t" });
    expect(done.status).toBe("completed");
    expect(done.state.trace).toEqual(["B:ok", "C:yes"]);
  });
});

describe("Send", () => {
  it("runs one node per Send in one step, each with its input, merged in the order sent", async () => {
    const store = new RecordingCheckpointer();
    const app = new StateGraph<Trace & { topics: string[]; topic?: string }>({
      reducers: { trace: concat },
      initialState: { trace: [], last: "", topics: [] },
    })
      .addNode("PLAN", () => ({ topics: ["x", "y", "z"] }))
      .addNode("RESEARCH", async (state) => {
        // Later topics finish first: the merge follows the sends, not the clock.
        await new Promise((resolve) =>
          setTimeout(resolve, 30 - 10 * state.topics.indexOf(state.topic!)),
        );
        return { trace: [`research ${state.topic}`] };
      })
      .addNode("REDUCE", (state) => ({ last: state.trace.join(" | ") }))
      .addConditionalEdges("PLAN", (state) =>
        state.topics.map((topic) => new Send("RESEARCH", { topic })),
      )
      .addEdge("RESEARCH", "REDUCE")
      .addEdge("REDUCE", END)
      .setEntryPoint("PLAN")
      .compile({ checkpointer: store, logger: recordingLogger() });

    const result = await app.invoke({ messages: [] }, { threadId: "t" });

    expect(result.state.trace).toEqual(["research x", "research y", "research z"]);
    expect(result.state.last).toBe("research x | research y | research z");
    // A Send's input is what its node sees, not a state update.
    expect(result.state.topic).toBeUndefined();
    expect(store.writes[1]!.frontier).toEqual({
      tasks: [
        { node: "RESEARCH", input: { topic: "x" } },
        { node: "RESEARCH", input: { topic: "y" } },
        { node: "RESEARCH", input: { topic: "z" } },
      ],
      joins: {},
    });
    expect(steps(store).map(([step]) => step)).toEqual([0, 1, 2, 3]);
  });

  it("refuses a Send to an unknown node (GRAPH_006) and a Send input that carries messages", async () => {
    const unknown = graph()
      .addNode("A", () => ({}))
      .addConditionalEdges("A", () => new Send("NOPE", {}))
      .setEntryPoint("A")
      .compile({ logger: recordingLogger() });
    const refused = await settle(unknown.invoke({ messages: [] }, { threadId: "t" }));
    expect(!refused.ok && isTenxgraphError(refused.error, "GRAPH_006")).toBe(true);

    const withMessages = graph()
      .addNode("A", () => ({}))
      .addNode("B", () => ({}))
      .addEdge("B", END)
      .addConditionalEdges("A", () => [new Send("B", { messages: [] })])
      .setEntryPoint("A")
      .compile({ logger: recordingLogger() });
    const bad = await settle(withMessages.invoke({ messages: [] }, { threadId: "t" }));
    expect(!bad.ok && isTenxgraphError(bad.error, "NODE_OUTPUT_001")).toBe(true);
  });
});
