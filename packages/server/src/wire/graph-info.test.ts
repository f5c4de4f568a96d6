import { END, Message, StateGraph, silentLogger, type BaseState } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { graphInfo } from "./graph-info.js";

describe("graphInfo (GET /v1/graph, which the inspector draws)", () => {
  it("is the graph's getGraph(): the same nodes and edges, and its breakpoints", () => {
    const app = new StateGraph<BaseState>()
      .addNode("MODEL", () => Message.assistant("hi"))
      .addNode("TOOLS", () => ({}))
      .addConditionalEdges("MODEL", () => END, ["TOOLS", END])
      .addEdge("TOOLS", "MODEL")
      .setEntryPoint("MODEL")
      .compile({ logger: silentLogger, interruptBefore: ["TOOLS"] });
    const info = graphInfo(app, false);
    const view = app.getGraph();
    expect(info.nodes).toEqual(view.nodes.map(({ id }) => ({ id, name: id })));
    expect(info.edges).toEqual(
      view.edges.map(({ source, target }) => ({ id: `${source}-${target}`, source, target })),
    );
    expect(info.edges.map((e) => e.id)).toEqual([
      "__start__-MODEL",
      "MODEL-TOOLS",
      "MODEL-__end__",
      "TOOLS-MODEL",
    ]);
    expect(info.info).toMatchObject({
      node_count: 4,
      edge_count: 4,
      interrupt_before: ["TOOLS"],
      interrupt_after: null,
    });
  });
});
