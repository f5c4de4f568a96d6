import type { Loop, Runtime, StoreSpec } from "./loop.js";
import type { Workload } from "./workload.js";

/**
 * Each runtime's opener, imported only when that runtime is opened: a process measuring one
 * runtime's memory (see `measure/peak-rss.ts`) must not load the other.
 */
const OPENERS: Record<Runtime, () => Promise<(w: Workload, s: StoreSpec) => Promise<Loop>>> = {
  tenxgraph: async () => (await import("./tenxgraph/open-tenxgraph-loop.js")).openTenxgraphLoop,
  langgraph: async () => (await import("./langgraph/open-langgraph-loop.js")).openLangGraphLoop,
};

/** `runtime`'s ReAct loop of `workload` on the store `spec` names, ready to run. */
export async function openLoop(
  runtime: Runtime,
  workload: Workload,
  spec: StoreSpec,
): Promise<Loop> {
  return (await OPENERS[runtime]())(workload, spec);
}
