import type { BaseState } from "./reducers.js";

/** Where a run goes when a node returns this. */
export const END = "__end__";

/** Chooses the next node from the state; returns a node name, `END`, or a key of the path map. */
export type Router<S extends BaseState> = (state: S) => string | Promise<string>;

/** How a node is left: always to one node, or to whichever node a router picks. */
export type Edge<S extends BaseState> =
  | { kind: "direct"; to: string }
  | { kind: "conditional"; router: Router<S>; pathMap: Record<string, string> | null };

/** Turns the array form of a path map (`["TOOL", END]`) into the record form. */
export function normalizePathMap(
  pathMap: Record<string, string> | readonly string[] | undefined,
): Record<string, string> | null {
  if (pathMap === undefined) return null;
  if (Array.isArray(pathMap)) return Object.fromEntries(pathMap.map((to) => [to, to]));
  return { ...(pathMap as Record<string, string>) };
}
