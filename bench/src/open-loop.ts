import type { Loop, Runtime, StoreSpec } from "./loop.js";
import type { Workload } from "./workload.js";

type OpenLoop = (workload: Workload, spec: StoreSpec) => Promise<Loop>;

/**
 * LangGraph.js lives in `bench/langgraph`, an npm project of its own that a fresh clone's
 * `npm ci` does not install (`npm run bench` installs it). It is imported by URL so that the
 * repository's type check does not follow it into packages that may not be installed;
 * `npm run langgraph:ready -w bench` type-checks it on its own.
 */
const LANGGRAPH_LOOP = new URL("../langgraph/src/open-langgraph-loop.ts", import.meta.url).href;

/**
 * Each runtime's opener, imported only when that runtime is opened: a process measuring one
 * runtime's memory (see `measure/peak-rss.ts`) must not load the other.
 */
const OPENERS: Record<Runtime, () => Promise<OpenLoop>> = {
  tenxgraph: async () => (await import("./tenxgraph/open-tenxgraph-loop.js")).openTenxgraphLoop,
  langgraph: async () =>
    ((await import(LANGGRAPH_LOOP)) as { openLangGraphLoop: OpenLoop }).openLangGraphLoop,
};

/** `runtime`'s ReAct loop of `workload` on the store `spec` names, ready to run. */
export async function openLoop(
  runtime: Runtime,
  workload: Workload,
  spec: StoreSpec,
): Promise<Loop> {
  return (await OPENERS[runtime]())(workload, spec);
}
