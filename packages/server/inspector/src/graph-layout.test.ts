import { describe, expect, it } from "vitest";
import { layoutGraph } from "./graph-layout.js";

const nodes = (...names: string[]) => names.map((name) => ({ id: name, name }));
const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target });

describe("layoutGraph", () => {
  const graph = {
    nodes: nodes("__start__", "MAIN", "TOOL", "__end__"),
    edges: [
      edge("__start__", "MAIN"),
      edge("MAIN", "TOOL"),
      edge("MAIN", "__end__"),
      edge("TOOL", "MAIN"),
    ],
  };

  it("puts each node on the row of its distance from the start, the end last", () => {
    const layout = layoutGraph(graph);
    const row = (name: string) => layout.nodes.find((n) => n.name === name)!.y;
    expect(row("__start__")).toBeLessThan(row("MAIN"));
    expect(row("MAIN")).toBeLessThan(row("TOOL"));
    expect(row("TOOL")).toBeLessThan(row("__end__"));
  });

  it("draws loops back up and edges past a row aside", () => {
    const shapes = Object.fromEntries(layoutGraph(graph).edges.map((e) => [e.id, e.shape]));
    expect(shapes).toEqual({
      "__start__-MAIN": "down",
      "MAIN-TOOL": "down",
      "MAIN-__end__": "skip",
      "TOOL-MAIN": "back",
    });
  });

  it("places nodes the start cannot reach below the others, side by side", () => {
    const layout = layoutGraph({
      nodes: nodes("__start__", "A", "B", "C"),
      edges: [edge("__start__", "A")],
    });
    const [b, c] = ["B", "C"].map((n) => layout.nodes.find((p) => p.name === n)!);
    expect(b!.y).toBe(c!.y);
    expect(b!.x).not.toBe(c!.x);
    expect(b!.y).toBeGreaterThan(layout.nodes.find((p) => p.name === "A")!.y);
  });
});
