import { describe, expect, it } from "vitest";
import { GraphValidationError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { CompiledGraph } from "./compiled-graph.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "./state-graph.js";

interface RouteState extends BaseState {
  route?: string;
  visited?: string[];
}

const noop = () => undefined;

/** A node that records its name in `visited`. */
const visit = (name: string) => (state: RouteState) => ({
  visited: [...(state.visited ?? []), name],
});

function expectGraphError(fn: () => unknown, code: string): GraphValidationError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(GraphValidationError);
  expect(isTenxgraphError(thrown)).toBe(true);
  expect((thrown as GraphValidationError).code).toBe(code);
  expect((thrown as GraphValidationError).name).toBe("GraphValidationError");
  return thrown as GraphValidationError;
}

function compileQuiet<S extends BaseState>(graph: StateGraph<S>) {
  return graph.compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
}

describe("StateGraph builder", () => {
  it("chains every builder method and compiles to a runnable graph", async () => {
    const graph = new StateGraph();
    expect(graph.addNode("A", noop)).toBe(graph);
    expect(graph.addEdge("A", END)).toBe(graph);
    expect(graph.setEntryPoint("A")).toBe(graph);
    const app = compileQuiet(graph);
    expect(app).toBeInstanceOf(CompiledGraph);

    const result = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t1" });
    expect(result.status).toBe("completed");
    expect(result.state.messages.map((m) => m.content)).toEqual(["hi"]);
  });

  it("accepts an object node with run() as well as a function", async () => {
    const app = compileQuiet(
      new StateGraph<RouteState>()
        .addNode("A", { run: async (state) => visit("A")(state) })
        .addNode("B", visit("B"))
        .addEdge("A", "B")
        .addEdge("B", END)
        .setEntryPoint("A"),
    );
    const result = await app.invoke({}, { threadId: "t1" });
    expect(result.state.visited).toEqual(["A", "B"]);
  });

  it("starts a new thread from initialState", async () => {
    const app = compileQuiet(
      new StateGraph<RouteState>({ initialState: { visited: ["start"] } })
        .addNode("A", visit("A"))
        .addEdge("A", END)
        .setEntryPoint("A"),
    );
    const result = await app.invoke({}, { threadId: "t1" });
    expect(result.state.visited).toEqual(["start", "A"]);
  });

  it("compiles independent apps: changing the builder afterwards does not change a compiled graph", async () => {
    const graph = new StateGraph<RouteState>()
      .addNode("A", visit("A"))
      .addEdge("A", END)
      .setEntryPoint("A");
    const app = compileQuiet(graph);
    graph.addNode("B", visit("B")).setEntryPoint("B").addEdge("B", END);
    const result = await app.invoke({}, { threadId: "t1" });
    expect(result.state.visited).toEqual(["A"]);
  });
});

describe("compile-time validation", () => {
  it("GRAPH_001: an edge to an unknown node", () => {
    // compile() checks what the types cannot: names from outside the type checker.
    // @ts-expect-error -- "B" was never added: a type error too
    const graph = new StateGraph().addNode("A", noop).addEdge("A", "B").setEntryPoint("A");
    const error = expectGraphError(() => graph.compile(), "GRAPH_001");
    expect(error.message).toContain("'B'");
  });

  it("GRAPH_001: an edge from an unknown node", () => {
    const graph = new StateGraph()
      .addNode("A", noop)
      .addEdge("A", END)
      // @ts-expect-error -- "GHOST" was never added: a type error too
      .addEdge("GHOST", "A")
      .setEntryPoint("A");
    expect(expectGraphError(() => graph.compile(), "GRAPH_001").message).toContain("GHOST");
  });

  it("GRAPH_001: an unknown entry point", () => {
    // @ts-expect-error -- "MAIN" was never added: a type error too
    const graph = new StateGraph().addNode("A", noop).addEdge("A", END).setEntryPoint("MAIN");
    expect(expectGraphError(() => graph.compile(), "GRAPH_001").message).toContain("MAIN");
  });

  it("GRAPH_001: an unknown node in a path map, record and array forms", () => {
    const record = new StateGraph()
      .addNode("A", noop)
      // @ts-expect-error -- "NOWHERE" was never added: a type error too
      .addConditionalEdges("A", () => "go", { go: "NOWHERE", stop: END })
      .setEntryPoint("A");
    expect(expectGraphError(() => record.compile(), "GRAPH_001").message).toContain("NOWHERE");

    const array = new StateGraph()
      .addNode("A", noop)
      // @ts-expect-error -- "NOWHERE" was never added: a type error too
      .addConditionalEdges("A", () => END, ["NOWHERE", END])
      .setEntryPoint("A");
    expectGraphError(() => array.compile(), "GRAPH_001");
  });

  it("GRAPH_002: no entry point", () => {
    const graph = new StateGraph().addNode("A", noop).addEdge("A", END);
    expectGraphError(() => graph.compile(), "GRAPH_002");
  });

  it("GRAPH_003: a duplicate, reserved, empty or non-callable node", () => {
    const graph = new StateGraph().addNode("A", noop);
    expect(expectGraphError(() => graph.addNode("A", noop), "GRAPH_003").message).toContain("'A'");
    expectGraphError(() => graph.addNode(END, noop), "GRAPH_003");
    expectGraphError(() => graph.addNode("  ", noop), "GRAPH_003");
    expectGraphError(() => graph.addNode("B", {} as never), "GRAPH_003");
    expectGraphError(() => graph.addNode("C", "not a node" as never), "GRAPH_003");
  });

  it("GRAPH_004: a node with no outgoing edge", () => {
    const graph = new StateGraph()
      .addNode("A", noop)
      .addNode("B", noop)
      .addEdge("A", "B")
      .setEntryPoint("A");
    const error = expectGraphError(() => graph.compile(), "GRAPH_004");
    expect(error.message).toContain("'B'");
  });

  it("GRAPH_005: a node with two sets of conditional edges; several fixed edges fan out", () => {
    const twoRouters = new StateGraph()
      .addNode("A", noop)
      .addConditionalEdges("A", () => END)
      .addConditionalEdges("A", () => END)
      .setEntryPoint("A");
    expectGraphError(() => twoRouters.compile(), "GRAPH_005");

    const fanOut = new StateGraph()
      .addNode("A", noop)
      .addNode("B", noop)
      .addEdge("A", "B")
      .addEdge("A", END)
      .addConditionalEdges("A", () => END)
      .addEdge("B", END)
      .setEntryPoint("A");
    expect(fanOut.compile({ logger: recordingLogger() })).toBeInstanceOf(CompiledGraph);
  });

  it("GRAPH_007: a join with no source, into END, or a second join into one node", () => {
    const graph = () => new StateGraph().addNode("A", noop).addNode("B", noop).addNode("C", noop);
    expectGraphError(() => graph().addEdge([], "C"), "GRAPH_007");
    expectGraphError(() => graph().addEdge(["A", "B"], "C").addEdge(["A"], "C"), "GRAPH_007");
    const intoEnd = graph().addEdge(["A", "B"], END).addEdge("C", END).setEntryPoint("A");
    expectGraphError(() => intoEnd.compile(), "GRAPH_007");
  });

  it("GRAPH_001 for an unknown join source or ends target; ends stand in for an edge", () => {
    const unknownSource = new StateGraph()
      .addNode("A", noop)
      .addEdge(["A", "Z" as "A"], END)
      .setEntryPoint("A");
    expectGraphError(() => unknownSource.compile(), "GRAPH_001");
    const unknownEnd = new StateGraph()
      .addNode("A", noop, { ends: ["Z" as "A"] })
      .setEntryPoint("A");
    expectGraphError(() => unknownEnd.compile(), "GRAPH_001");
    const routesByCommand = new StateGraph()
      .addNode("A", noop, { ends: ["B", END] })
      .addNode("B", noop)
      .addEdge("B", END)
      .setEntryPoint("A");
    expect(routesByCommand.compile({ logger: recordingLogger() })).toBeInstanceOf(CompiledGraph);
  });

  it("accepts END as a path map destination", () => {
    const graph = new StateGraph()
      .addNode("A", noop)
      .addConditionalEdges("A", () => "done", { done: END })
      .setEntryPoint("A");
    expect(graph.compile({ logger: recordingLogger() })).toBeInstanceOf(CompiledGraph);
  });
});

describe("compile options", () => {
  const graph = () =>
    new StateGraph()
      .addNode("A", () => Message.assistant("a"))
      .addEdge("A", END)
      .setEntryPoint("A");

  it("refuses a claim staleness shorter than two heartbeat intervals", () => {
    expect(() => graph().compile({ stopPollIntervalMs: 1000, claimStaleAfterMs: 1500 })).toThrow(
      /claimStaleAfterMs \(1500\) must be at least twice stopPollIntervalMs \(1000\)/,
    );
    expect(() =>
      graph().compile({ stopPollIntervalMs: 500, claimStaleAfterMs: 1000 }),
    ).not.toThrow();
  });

  it.each([0, -5, Number.NaN])("refuses a stopPollIntervalMs of %s", (value) => {
    expect(() => graph().compile({ stopPollIntervalMs: value })).toThrow(
      /stopPollIntervalMs must be a positive number/,
    );
  });
});

describe("conditional edges", () => {
  /** A → (router) → B or C, both → END. */
  function branching(
    router: (state: RouteState) => string | Promise<string>,
    pathMap?: Record<string, string> | string[],
  ) {
    return compileQuiet(
      new StateGraph<RouteState>()
        .addNode("A", (state) => ({ visited: [...(state.visited ?? []), "A"] }))
        .addNode("B", visit("B"))
        .addNode("C", visit("C"))
        .addConditionalEdges("A", router, pathMap)
        .addEdge("B", END)
        .addEdge("C", END)
        .setEntryPoint("A"),
    );
  }

  it("without a path map: the router returns a node name or END, and sees the node's update", async () => {
    const seen: (string[] | undefined)[] = [];
    const app = branching((state) => {
      seen.push(state.visited);
      return state.route === "end" ? END : (state.route ?? "B");
    });
    expect((await app.invoke({ route: "C" }, { threadId: "c" })).state.visited).toEqual(["A", "C"]);
    expect((await app.invoke({ route: "B" }, { threadId: "b" })).state.visited).toEqual(["A", "B"]);
    expect((await app.invoke({ route: "end" }, { threadId: "e" })).state.visited).toEqual(["A"]);
    expect(seen).toEqual([["A"], ["A"], ["A"]]);
  });

  it("an async router", async () => {
    const app = branching(async (state) => (state.route === "c" ? "C" : "B"));
    expect((await app.invoke({ route: "c" }, { threadId: "t" })).state.visited).toEqual(["A", "C"]);
  });

  it("with a record path map: the router returns a key, the run goes to its value", async () => {
    const app = branching((state) => state.route ?? "left", { left: "B", right: "C", stop: END });
    expect((await app.invoke({ route: "right" }, { threadId: "r" })).state.visited).toEqual([
      "A",
      "C",
    ]);
    expect((await app.invoke({ route: "left" }, { threadId: "l" })).state.visited).toEqual([
      "A",
      "B",
    ]);
    expect((await app.invoke({ route: "stop" }, { threadId: "s" })).state.visited).toEqual(["A"]);
  });

  it("with an array path map: the router returns one of its entries", async () => {
    const app = branching((state) => state.route ?? END, ["C", END]);
    expect((await app.invoke({ route: "C" }, { threadId: "c" })).state.visited).toEqual(["A", "C"]);
    expect((await app.invoke({}, { threadId: "e" })).state.visited).toEqual(["A"]);
  });

  it("GRAPH_006 at run time: the router returns a node the graph does not have", async () => {
    const app = branching(() => "NOWHERE");
    const error = await app.invoke({}, { threadId: "t" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphValidationError);
    expect((error as GraphValidationError).code).toBe("GRAPH_006");
    expect((error as Error).message).toContain("'NOWHERE'");
    const state = await app.getState({ threadId: "t" });
    expect(state).toMatchObject({ status: "failed", currentNode: "A" });
  });

  it("GRAPH_006 at run time: the router returns a key outside its record path map", async () => {
    // "C" is a node, but not a key of the map: the map is the whole set of choices.
    const app = branching(() => "C", { left: "B" });
    await expect(app.invoke({}, { threadId: "t" })).rejects.toMatchObject({ code: "GRAPH_006" });
  });

  it("GRAPH_006 at run time: the router returns a node outside its array path map", async () => {
    const app = branching(() => "B", ["C", END]);
    await expect(app.invoke({}, { threadId: "t" })).rejects.toMatchObject({ code: "GRAPH_006" });
  });
});
