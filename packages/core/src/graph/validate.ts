import { GraphValidationError } from "../errors/errors.js";
import { END, type Edge } from "./edges.js";
import type { BaseState } from "./reducers.js";

/** The parts of a graph that `compile()` checks. */
export interface GraphShape<S extends BaseState> {
  nodes: ReadonlyMap<string, unknown>;
  edges: ReadonlyMap<string, Edge<S>[]>;
  entryPoint: string | null;
}

/**
 * Rejects a graph that could only fail at run time: an unknown node in an edge or path map,
 * no entry point, a node with no way out, or a node with two ways out.
 */
export function validateGraph<S extends BaseState>(graph: GraphShape<S>): void {
  if (graph.entryPoint === null) {
    throw new GraphValidationError(
      "GRAPH_002",
      "The graph has no entry point: call setEntryPoint(node)",
    );
  }
  requireNode(graph, graph.entryPoint, "the entry point");
  for (const [from, edges] of graph.edges) {
    requireNode(graph, from, "an edge's source");
    if (edges.length > 1) {
      throw new GraphValidationError(
        "GRAPH_005",
        `Node '${from}' has ${edges.length} outgoing edges; a node has exactly one edge or one set of conditional edges`,
      );
    }
    for (const edge of edges) {
      const targets = edge.kind === "direct" ? [edge.to] : Object.values(edge.pathMap ?? {});
      for (const to of targets) if (to !== END) requireNode(graph, to, `an edge from '${from}'`);
    }
  }
  for (const name of graph.nodes.keys()) {
    if (!graph.edges.has(name)) {
      throw new GraphValidationError(
        "GRAPH_004",
        `Node '${name}' has no outgoing edge: add addEdge('${name}', END) if the run should end there`,
      );
    }
  }
}

function requireNode<S extends BaseState>(graph: GraphShape<S>, name: string, role: string): void {
  if (!graph.nodes.has(name)) {
    const known = [...graph.nodes.keys()].join(", ") || "none";
    throw new GraphValidationError(
      "GRAPH_001",
      `Unknown node '${name}' used as ${role} (nodes: ${known})`,
    );
  }
}
