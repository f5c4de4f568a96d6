import { END } from "../definition/edges.js";
import type { GraphDefinition } from "../definition/graph-definition.js";
import type { BaseState } from "../definition/reducers.js";
import { Subgraph } from "./subgraph.js";

/** The node a graph's picture starts from, as LangGraph.js names it. */
export const START_NODE = "__start__";

/** A node of a {@link GraphView}: START and END are nodes too. */
export interface GraphViewNode {
  /** The node's name (`__start__`, `__end__` for START and END). */
  id: string;
  /** With `getGraph({ xray: true })`, a subgraph node's own graph. */
  subgraph?: GraphView;
}

/** An edge of a {@link GraphView}. */
export interface GraphViewEdge {
  source: string;
  target: string;
  /**
   * Taken only when a router, a `Command` or a `Send` says so: a conditional edge's declared
   * destination, a node's `ends`, or (for a conditional edge without a path map) any node.
   */
  conditional: boolean;
  /** The router's result that leads here, when the path map names it differently. */
  label?: string;
}

/**
 * What `getGraph()` describes: a compiled graph's nodes and edges, START and END included, each
 * edge once. Servers and the inspector draw from it; `drawMermaid()` writes it as a Mermaid
 * flowchart.
 */
export class GraphView {
  readonly nodes: readonly GraphViewNode[];
  readonly edges: readonly GraphViewEdge[];

  constructor(nodes: readonly GraphViewNode[], edges: readonly GraphViewEdge[]) {
    this.nodes = Object.freeze([...nodes]);
    this.edges = Object.freeze([...edges]);
  }

  /** The graph as a Mermaid flowchart (top-down; conditional edges dotted), as LangGraph.js draws it. */
  drawMermaid(): string {
    const lines = ["%%{init: {'flowchart': {'curve': 'linear'}}}%%", "graph TD;"];
    lines.push(...mermaidBody(this, ""));
    lines.push(
      "\tclassDef default fill:#f2f0ff,line-height:1.2",
      "\tclassDef first fill-opacity:0",
      "\tclassDef last fill:#bfb6fc",
    );
    return lines.join("\n") + "\n";
  }
}

/** The view of `graph`; with `xray`, each subgraph node carries its graph's view. */
export function viewGraph<S extends BaseState>(
  graph: GraphDefinition<S>,
  xray: boolean,
): GraphView {
  const names = [START_NODE, ...graph.nodes.keys(), END];
  const edges = new Map<string, GraphViewEdge>();
  const add = (edge: GraphViewEdge) => {
    const id = `${edge.source}->${edge.target}`;
    if (!edges.has(id)) edges.set(id, edge);
  };
  add({ source: START_NODE, target: graph.entryPoint, conditional: false });
  for (const from of graph.nodes.keys()) {
    for (const edge of graph.edges.get(from) ?? []) {
      if (edge.kind !== "conditional") {
        add({ source: from, target: edge.to, conditional: false });
      } else if (edge.pathMap) {
        for (const [result, to] of Object.entries(edge.pathMap)) {
          add({
            source: from,
            target: to,
            conditional: true,
            ...(result !== to && { label: result }),
          });
        }
      } else {
        // A router without a path map may go anywhere.
        for (const to of [...graph.nodes.keys(), END])
          add({ source: from, target: to, conditional: true });
      }
    }
    for (const to of graph.ends.get(from) ?? [])
      add({ source: from, target: to, conditional: true });
  }
  const nodes = names.map((id): GraphViewNode => {
    const node = graph.nodes.get(id);
    return xray && node instanceof Subgraph
      ? { id, subgraph: viewGraph(node.graph.definition, true) }
      : { id };
  });
  return new GraphView(nodes, [...edges.values()]);
}

/** The node and edge lines of `view`, its ids prefixed by `prefix` (a subgraph's `NODE:`). */
function mermaidBody(view: GraphView, prefix: string): string[] {
  const lines: string[] = [];
  for (const { id, subgraph } of view.nodes) {
    const key = mermaidId(prefix + id);
    if (subgraph) {
      lines.push(`\tsubgraph ${key}[${id}]`, ...mermaidBody(subgraph, `${prefix}${id}:`), "\tend");
    } else if (id === START_NODE || id === END) {
      const end = id === END ? "last" : "first";
      // A subgraph's own START and END are drawn plainly, inside its block.
      lines.push(prefix ? `\t${key}([<p>${id}</p>])` : `\t${key}([<p>${id}</p>]):::${end}`);
    } else {
      lines.push(`\t${key}(${id})`);
    }
  }
  for (const { source, target, conditional, label } of view.edges) {
    const [from, to] = [mermaidId(prefix + source), mermaidId(prefix + target)];
    const arrow = conditional ? (label ? `-. &nbsp;${label}&nbsp; .->` : "-.->") : "-->";
    lines.push(`\t${from} ${arrow} ${to};`);
  }
  return lines;
}

/** A Mermaid node id: the name with characters Mermaid reads as syntax replaced. */
function mermaidId(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}
