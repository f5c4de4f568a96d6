import { canonicalJson, sha256Hex } from "../storage/json-digest.js";
import type { GraphVersion } from "../storage/checkpoint-record.js";
import { edgeDestinations, type Edge } from "./edges.js";
import { isGraphNode, type NodeLike } from "./graph-node.js";
import type { BaseState } from "./reducers.js";

/** The parts of a graph its version is made of. */
export interface VersionedShape<S extends BaseState> {
  nodes: ReadonlyMap<string, NodeLike<S>>;
  edges: ReadonlyMap<string, readonly Edge<S>[]>;
  joins: ReadonlyMap<string, readonly string[]>;
  ends: ReadonlyMap<string, readonly string[]>;
  entryPoint: string;
}

/**
 * The graph's version: the digest of its shape (node names, edges and where they may lead,
 * joins, `ends`, the entry point, each node's tools with their arguments' JSON Schema, a
 * subgraph's own version) and the author's `version`. Code is not in it: a node or router whose
 * code changed what it means is what `compile({ version })` is for. Computed once, by `compile()`.
 */
export function graphVersion<S extends BaseState>(
  graph: VersionedShape<S>,
  version: string | undefined,
): GraphVersion {
  const fingerprint = `sha256:${sha256Hex(canonicalJson(shapeOf(graph)))}`;
  return version === undefined ? { fingerprint } : { fingerprint, version };
}

/** Two versions are the same when both the shape and the author's version agree. */
export function sameVersion(a: GraphVersion | undefined, b: GraphVersion): boolean {
  return a !== undefined && a.fingerprint === b.fingerprint && a.version === b.version;
}

function shapeOf<S extends BaseState>(graph: VersionedShape<S>): unknown {
  const nodes = [...graph.nodes].map(([name, node]) => ({ name, ...nodeShape(node) }));
  const edges = [...graph.edges].map(([from, out]) => ({ from, out: out.map(edgeShape) }));
  return {
    // Sorted: the order nodes and edges were added in does not change what the graph is.
    nodes: nodes.sort((a, b) => compare(a.name, b.name)),
    edges: edges.sort((a, b) => compare(a.from, b.from)),
    joins: Object.fromEntries(graph.joins),
    ends: Object.fromEntries(graph.ends),
    entryPoint: graph.entryPoint,
  };
}

function nodeShape<S extends BaseState>(node: NodeLike<S>): Record<string, unknown> {
  if (!isGraphNode(node)) return {};
  const tools = (node.tools ?? []).map((tool) => ({ name: tool.name, args: tool.jsonSchema() }));
  return { tools: tools.sort((a, b) => compare(a.name, b.name)), ...node.versionShape?.() };
}

function edgeShape<S extends BaseState>(edge: Edge<S>): unknown {
  return { kind: edge.kind, to: edgeDestinations(edge) };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
