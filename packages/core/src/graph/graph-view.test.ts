import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import { Message } from "../messages/message.js";
import { recordingLogger } from "../support/helpers.js";
import { StateGraph } from "./state-graph.js";

/** MODEL routes to TOOLS or END (a path map with a renamed result); TOOLS goes back. */
function agent() {
  return new StateGraph()
    .addNode("MODEL", () => Message.assistant("hi"))
    .addNode("TOOLS", () => ({}))
    .addConditionalEdges("MODEL", () => END, { tools: "TOOLS", [END]: END })
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ logger: recordingLogger() });
}

describe("getGraph()", () => {
  it("lists START, the nodes and END, and each edge once, conditional ones marked", () => {
    const view = agent().getGraph();
    expect(view.nodes).toEqual([
      { id: "__start__" },
      { id: "MODEL" },
      { id: "TOOLS" },
      { id: "__end__" },
    ]);
    expect(view.edges).toEqual([
      { source: "__start__", target: "MODEL", conditional: false },
      { source: "MODEL", target: "TOOLS", conditional: true, label: "tools" },
      { source: "MODEL", target: "__end__", conditional: true },
      { source: "TOOLS", target: "MODEL", conditional: false },
    ]);
  });

  it("drawMermaid() writes a Mermaid flowchart", () => {
    expect(agent().getGraph().drawMermaid()).toBe(
      [
        "%%{init: {'flowchart': {'curve': 'linear'}}}%%",
        "graph TD;",
        "\t__start__([<p>__start__</p>]):::first",
        "\tMODEL(MODEL)",
        "\tTOOLS(TOOLS)",
        "\t__end__([<p>__end__</p>]):::last",
        "\t__start__ --> MODEL;",
        "\tMODEL -. &nbsp;tools&nbsp; .-> TOOLS;",
        "\tMODEL -.-> __end__;",
        "\tTOOLS --> MODEL;",
        "\tclassDef default fill:#f2f0ff,line-height:1.2",
        "\tclassDef first fill-opacity:0",
        "\tclassDef last fill:#bfb6fc",
        "",
      ].join("\n"),
    );
  });

  it("a router without a path map may go anywhere; Command ends and joins are edges", () => {
    const view = new StateGraph()
      .addNode("A", () => ({}), { ends: ["C"] })
      .addNode("B", () => ({}))
      .addNode("C", () => ({}))
      .addConditionalEdges("A", () => "B")
      .addEdge(["B", "A"], "C")
      .addEdge("C", END)
      .setEntryPoint("A")
      .compile({ logger: recordingLogger() })
      .getGraph();
    const edges = view.edges.map((e) => `${e.source}${e.conditional ? "-.->" : "-->"}${e.target}`);
    expect(edges).toEqual([
      "__start__-->A",
      "A-.->A",
      "A-.->B",
      "A-.->C",
      "A-.->__end__",
      "B-->C",
      "C-->__end__",
    ]);
  });

  it("with xray, a subgraph node carries its graph, drawn as a block", () => {
    const child = new StateGraph()
      .addNode("INNER", () => ({}))
      .addEdge("INNER", END)
      .setEntryPoint("INNER")
      .compile({ logger: recordingLogger() });
    const parent = new StateGraph()
      .addNode("WORKER", child)
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ logger: recordingLogger() });
    expect(parent.getGraph().nodes[1]).toEqual({ id: "WORKER" });
    const view = parent.getGraph({ xray: true });
    expect(view.nodes[1]!.subgraph?.nodes.map((n) => n.id)).toEqual([
      "__start__",
      "INNER",
      "__end__",
    ]);
    expect(view.drawMermaid()).toContain(
      [
        "\tsubgraph WORKER[WORKER]",
        "\tWORKER___start__([<p>__start__</p>])",
        "\tWORKER_INNER(INNER)",
        "\tWORKER___end__([<p>__end__</p>])",
        "\tWORKER___start__ --> WORKER_INNER;",
        "\tWORKER_INNER --> WORKER___end__;",
        "\tend",
        "\t__end__([<p>__end__</p>]):::last",
        "\t__start__ --> WORKER;",
        "\tWORKER --> __end__;",
      ].join("\n"),
    );
  });
});
