import { appendEffect, readEffects as readLog } from "../../support/effect-log.js";

export { appendEffect };

/** One side effect, as a tool wrote it to the external log. */
export interface Effect {
  /** What happened, e.g. `"start"`. */
  event: string;
  threadId: string;
  /** The tool call: `<assistant message id>:<tool call id>`. */
  key: string;
  tool: string;
  /** The process and run that did it. */
  pid: number;
  runId: string;
}

/** Every effect in the log at `path`, oldest first. */
export function readEffects(path: string): Effect[] {
  return readLog<Effect>(path);
}

/** How many times each call of `threadId` started, by key, per the log at `path`. */
export function startsByKey(path: string, threadId: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const effect of readEffects(path)) {
    if (effect.event !== "start" || effect.threadId !== threadId) continue;
    counts.set(effect.key, (counts.get(effect.key) ?? 0) + 1);
  }
  return counts;
}
