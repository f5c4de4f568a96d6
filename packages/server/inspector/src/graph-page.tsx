import { GraphPicture } from "./graph-picture.js";
import { useLoad } from "./use-load.js";

/** The served graph: its picture and what `/v1/graph` says about it. */
export function GraphPage() {
  const [graph] = useLoad((client, signal) => client.getGraph({ signal }), []);
  return (
    <section class="card">
      <h2>Graph</h2>
      {graph.state === "loading" && <p class="muted">Loading the graph…</p>}
      {graph.state === "failed" && <p class="error">{graph.message}</p>}
      {graph.state === "ready" && (
        <>
          <p class="muted">
            {graph.value.info.node_count} nodes, {graph.value.info.edge_count} edges
            {graph.value.info.checkpointer_type
              ? `, stored in ${graph.value.info.checkpointer_type}`
              : ""}
          </p>
          <GraphPicture graph={graph.value} />
        </>
      )}
    </section>
  );
}
