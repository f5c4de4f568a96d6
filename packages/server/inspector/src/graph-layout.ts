import type { GraphInfo } from "@tenxgraph/client";

/** A node placed on the picture: its centre. */
export interface PlacedNode {
  name: string;
  x: number;
  y: number;
}

/**
 * An edge between two placed nodes, by how it is drawn: `down` to the next row, `back` up (a
 * loop, curved on the right), `skip` down past rows in between (curved on the left, so it does
 * not run through the nodes it passes).
 */
export interface PlacedEdge {
  id: string;
  from: PlacedNode;
  to: PlacedNode;
  shape: "down" | "back" | "skip";
}

/** The picture of a graph: where each node and edge goes, and its size. */
export interface GraphLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

export const NODE_WIDTH = 140;
export const NODE_HEIGHT = 36;
const ROW_GAP = 70;
const COLUMN_GAP = 40;
const MARGIN = 60;

/**
 * Rows from the start down: each node on the row of its shortest distance from `__start__`
 * (nodes it cannot reach below them), `__end__` always last. Nodes of a row sit side by side.
 */
export function layoutGraph(graph: Pick<GraphInfo, "nodes" | "edges">): GraphLayout {
  const rows = rowsOf(graph);
  const widest = Math.max(1, ...rows.map((row) => row.length));
  const width = widest * (NODE_WIDTH + COLUMN_GAP) - COLUMN_GAP + 2 * MARGIN;
  const placed = new Map<string, PlacedNode>();
  rows.forEach((row, r) => {
    const rowWidth = row.length * (NODE_WIDTH + COLUMN_GAP) - COLUMN_GAP;
    const left = (width - rowWidth) / 2 + NODE_WIDTH / 2;
    row.forEach((name, i) => {
      const y = MARGIN + NODE_HEIGHT / 2 + r * (NODE_HEIGHT + ROW_GAP);
      placed.set(name, { name, x: left + i * (NODE_WIDTH + COLUMN_GAP), y });
    });
  });
  const edges = graph.edges.flatMap((edge) => {
    const from = placed.get(edge.source);
    const to = placed.get(edge.target);
    return from && to ? [{ id: edge.id, from, to, shape: shapeOf(from, to) }] : [];
  });
  const height = 2 * MARGIN + rows.length * (NODE_HEIGHT + ROW_GAP) - ROW_GAP;
  return { nodes: [...placed.values()], edges, width, height };
}

function shapeOf(from: PlacedNode, to: PlacedNode): PlacedEdge["shape"] {
  if (to.y <= from.y) return "back";
  return to.y - from.y > NODE_HEIGHT + ROW_GAP ? "skip" : "down";
}

function rowsOf(graph: Pick<GraphInfo, "nodes" | "edges">): string[][] {
  const names = graph.nodes.map((n) => n.name);
  const depth = new Map<string, number>([["__start__", 0]]);
  const queue = ["__start__"];
  while (queue.length > 0) {
    const name = queue.shift()!;
    for (const edge of graph.edges) {
      if (edge.source !== name || depth.has(edge.target) || edge.target === "__end__") continue;
      depth.set(edge.target, depth.get(name)! + 1);
      queue.push(edge.target);
    }
  }
  const reached = Math.max(0, ...depth.values());
  const rows: string[][] = [];
  const put = (name: string, row: number) => (rows[row] ??= []).push(name);
  const inner = names.filter((n) => n !== "__start__" && n !== "__end__");
  if (names.includes("__start__")) put("__start__", 0);
  for (const name of inner) put(name, depth.get(name) ?? reached + 1);
  if (names.includes("__end__")) put("__end__", rows.length);
  return rows.filter((row) => row !== undefined);
}
