import type { GraphInfo } from "@tenxgraph/client";
import { layoutGraph, NODE_HEIGHT, NODE_WIDTH, type PlacedEdge } from "./graph-layout.js";

/** The graph as an SVG picture: nodes in rows from the start, `current` highlighted. */
export function GraphPicture(props: { graph: GraphInfo; current?: string | null }) {
  const layout = layoutGraph(props.graph);
  return (
    <svg
      class="graph"
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      width={layout.width}
      height={layout.height}
      role="img"
      aria-label="The graph's nodes and edges"
    >
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="10"
          refY="5"
          markerWidth="7"
          markerHeight="7"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" />
        </marker>
      </defs>
      {layout.edges.map((edge) => (
        <path key={edge.id} class="edge" d={edgePath(edge)} marker-end="url(#arrow)" />
      ))}
      {layout.nodes.map((node) => (
        <g
          key={node.name}
          class={node.name === props.current ? "node current" : "node"}
          data-node={node.name}
          transform={`translate(${node.x - NODE_WIDTH / 2}, ${node.y - NODE_HEIGHT / 2})`}
        >
          <rect width={NODE_WIDTH} height={NODE_HEIGHT} rx={node.name.startsWith("__") ? 18 : 6} />
          <text x={NODE_WIDTH / 2} y={NODE_HEIGHT / 2 + 5} text-anchor="middle">
            {node.name}
          </text>
        </g>
      ))}
    </svg>
  );
}

/** Down from the bottom of one node to the top of the next; loops and long edges curve aside. */
function edgePath({ from, to, shape }: PlacedEdge): string {
  const half = NODE_HEIGHT / 2;
  const halfWidth = NODE_WIDTH / 2;
  switch (shape) {
    case "down":
      return `M${from.x},${from.y + half} L${to.x},${to.y - half}`;
    case "back": {
      const side = Math.max(from.x, to.x) + halfWidth + 40;
      return `M${from.x + halfWidth},${from.y} C${side},${from.y} ${side},${to.y} ${to.x + halfWidth},${to.y}`;
    }
    case "skip": {
      const side = Math.min(from.x, to.x) - halfWidth - 40;
      return `M${from.x - halfWidth},${from.y} C${side},${from.y} ${side},${to.y} ${to.x - halfWidth},${to.y}`;
    }
  }
}
