import { appendEffect, readEffects as readLog } from "../../support/effect-log.js";
import type { Effect } from "./agent-params.js";

export { appendEffect };

/** Every effect in the log at `path`, oldest first. */
export function readEffects(path: string): Effect[] {
  return readLog<Effect>(path);
}

/** How many effects the log holds for `tool` (and `order`, when given). */
export function countEffects(path: string, tool: Effect["tool"], order?: string): number {
  return readEffects(path).filter(
    (e) => e.tool === tool && (order === undefined || e.order === order),
  ).length;
}
