import type { BaseState } from "./reducers.js";
import type { Send } from "./send.js";

/** Where a run goes when a node returns this. */
export const END = "__end__";

/**
 * Where a run starts, as an edge's source: `addEdge(START, "a")` is `setEntryPoint("a")`
 * (LangGraph.js's spelling; exported by `@tenxgraph/core/langgraph`).
 */
export const START = "__start__";

/**
 * What a router returns: a node name, `END` or a key of the path map; `Send`s; or a list of
 * them, all run in the next step.
 */
export type RouterChoice<T extends string = string> =
  T | Send<unknown> | readonly (T | Send<unknown>)[];

/** Chooses where to go from the state. */
export type Router<S extends BaseState> = (state: S) => RouterChoice | Promise<RouterChoice>;

/**
 * One way out of a node; a node may have several (all taken, in the order they were added):
 * - `direct`: always to `to`;
 * - `join`: `to` once every source of the join (`addEdge([a, b], to)`) has finished;
 * - `conditional`: wherever the router says.
 */
export type Edge<S extends BaseState> =
  | { kind: "direct"; to: string }
  | { kind: "join"; to: string }
  | { kind: "conditional"; router: Router<S>; pathMap: Record<string, string> | null };

/** The nodes an edge may lead to (`null`: any node, a conditional edge without a path map). */
export function edgeDestinations<S extends BaseState>(edge: Edge<S>): string[] | null {
  if (edge.kind !== "conditional") return [edge.to];
  return edge.pathMap ? Object.values(edge.pathMap) : null;
}

/** Turns the array form of a path map (`["TOOL", END]`) into the record form. */
export function normalizePathMap(
  pathMap: Record<string, string> | readonly string[] | undefined,
): Record<string, string> | null {
  if (pathMap === undefined) return null;
  if (Array.isArray(pathMap)) return Object.fromEntries(pathMap.map((to) => [to, to]));
  return { ...(pathMap as Record<string, string>) };
}
