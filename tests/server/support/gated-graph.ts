import { END, Message, StateGraph, silentLogger } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";

/**
 * A two-node graph (MAIN answers, then WAIT answers once its gate is open), so a case can hold
 * a background run between its nodes: `close()` shuts the gate for the runs that reach WAIT
 * next, `open()` lets them through. The gate starts open.
 */
export function gatedGraph(checkpointer: Checkpointer) {
  let gate: Promise<void> = Promise.resolve();
  let opener = () => {};
  const graph = new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addNode("WAIT", async () => {
      await gate;
      return Message.assistant("done");
    })
    .addEdge("MAIN", "WAIT")
    .addEdge("WAIT", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
  return {
    graph,
    close: () => {
      gate = new Promise((resolve) => (opener = resolve));
    },
    open: () => opener(),
  };
}
