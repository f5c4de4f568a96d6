import { GraphValidationError } from "../errors/errors.js";
import { END, edgeDestinations, type Edge } from "./edges.js";
import type { BaseState } from "./reducers.js";

/** The parts of a graph that `compile()` checks. */
export interface GraphShape<S extends BaseState> {
  nodes: ReadonlyMap<string, unknown>;
  edges: ReadonlyMap<string, Edge<S>[]>;
  joins: ReadonlyMap<string, readonly string[]>;
  ends: ReadonlyMap<string, readonly string[]>;
  entryPoint: string | null;
}

/**
 * Rejects a graph that could only fail at run time: an unknown node in an edge, path map, join
 * or `ends`, no entry point, a node with no way out, or a node with two routers.
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
    if (edges.filter((edge) => edge.kind === "conditional").length > 1) {
      throw new GraphValidationError(
        "GRAPH_005",
        `Node '${from}' has two sets of conditional edges: give it one router (a router may return several nodes or Sends)`,
      );
    }
    for (const edge of edges) {
      for (const to of edgeDestinations(edge) ?? []) {
        if (to !== END) requireNode(graph, to, `an edge from '${from}'`);
      }
    }
  }
  for (const [to, sources] of graph.joins) {
    if (to === END) {
      throw new GraphValidationError("GRAPH_007", "A join cannot lead to END: join into a node");
    }
    requireNode(graph, to, "a join's target");
    for (const source of sources) requireNode(graph, source, `a source of the join into '${to}'`);
  }
  for (const [from, ends] of graph.ends) {
    for (const to of ends) if (to !== END) requireNode(graph, to, `a place '${from}' ends at`);
  }
  for (const name of graph.nodes.keys()) {
    if (!graph.edges.has(name) && !graph.ends.has(name)) {
      throw new GraphValidationError(
        "GRAPH_004",
        `Node '${name}' has no outgoing edge: add addEdge('${name}', END) if the run should end there (or addNode(name, node, { ends }) for a node that routes with Command)`,
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
