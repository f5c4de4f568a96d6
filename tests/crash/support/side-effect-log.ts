import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { Effect } from "./agent-params.js";

/**
 * Appends one effect as a JSON line. `appendFileSync` returns only once the write reached the
 * kernel, so a SIGKILL right after it cannot undo it: the log is what the outside world saw.
 */
export function appendEffect(path: string, effect: Effect): void {
  appendFileSync(path, `${JSON.stringify(effect)}\n`);
}

/** Every effect in the log, oldest first (none when the file does not exist yet). */
export function readEffects(path: string): Effect[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Effect);
}

/** How many effects the log holds for `tool` (and `order`, when given). */
export function countEffects(path: string, tool: Effect["tool"], order?: string): number {
  return readEffects(path).filter(
    (e) => e.tool === tool && (order === undefined || e.order === order),
  ).length;
}
