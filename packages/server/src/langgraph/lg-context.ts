import type { BaseState, CompiledGraph } from "@tenxgraph/core";
import type { RunsContext } from "../background/runs-context.js";
import type { StorageContext } from "../storage/storage-context.js";

/**
 * The graphs a server serves, by LangGraph graph id (`langgraph.json`'s `graphs` keys; one
 * named `agent` for a `tenxgraph.json` project). Each is an assistant. They share one
 * checkpointer, so threads, ownership and the ledger are one.
 */
export interface LgGraphs {
  /** The graph the /v1 routes serve and a thread without a `graph_id` runs. */
  default: CompiledGraph<BaseState>;
  defaultId: string;
  byId: ReadonlyMap<string, CompiledGraph<BaseState>>;
}

/** What LangGraph's Agent Server routes work with: the server's context, and the graphs. */
export interface LgContext extends RunsContext, StorageContext {
  graphs: LgGraphs;
}

/** One graph as the graph set of a server that serves only it. */
export function singleGraph(graph: CompiledGraph<BaseState>, id = "agent"): LgGraphs {
  return { default: graph, defaultId: id, byId: new Map([[id, graph]]) };
}
