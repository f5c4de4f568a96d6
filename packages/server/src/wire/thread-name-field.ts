/**
 * The state field that keeps a thread's name, written with the thread's first checkpoint (the
 * run's start write), so a name needs no storage of its own and no extra write. Hidden from the
 * wire state and refused from clients' state edits; `thread_name` in thread listings reads it.
 */
export const THREAD_NAME_FIELD = "__thread_name__";

/**
 * The state field that keeps what LangGraph's API says about a thread (its `metadata`, with
 * `graph_id`, and its creation time), in its checkpoints as its name is. Hidden like the name.
 */
export const LG_THREAD_FIELD = "__langgraph_thread__";

/** The stored name of a thread, from its checkpoint's values. */
export function storedThreadName(values: Record<string, unknown>): string | null {
  const name = values[THREAD_NAME_FIELD];
  return typeof name === "string" ? name : null;
}

/**
 * The served graph a thread runs, as LangGraph's API recorded it (`metadata.graph_id`, set when
 * a run of a `langgraph.json` graph created the thread); `undefined` for a thread of the default
 * graph. What resumes a thread without a request (a timer) runs it under this graph.
 */
export function storedGraphId(values: Record<string, unknown>): string | undefined {
  const record = values[LG_THREAD_FIELD] as { metadata?: { graph_id?: unknown } } | undefined;
  const graphId = record?.metadata?.graph_id;
  return typeof graphId === "string" ? graphId : undefined;
}

/** A graph a server serves, with its id. */
export interface ServedGraph<G> {
  graph: G;
  id: string;
}

/**
 * The served graph that runs a thread: the one its runs ran ({@link storedGraphId}), else
 * `fallback` (the server's default graph); `null` when its graph id names a graph this server
 * does not serve. The one lookup behind timers and LangGraph's routes.
 */
export function servedGraphOf<G>(
  values: Record<string, unknown>,
  fallback: ServedGraph<G>,
  byId: ReadonlyMap<string, G> | undefined,
): ServedGraph<G> | null {
  const graphId = storedGraphId(values);
  if (graphId === undefined || graphId === fallback.id) return fallback;
  const graph = byId?.get(graphId);
  return graph ? { graph, id: graphId } : null;
}
