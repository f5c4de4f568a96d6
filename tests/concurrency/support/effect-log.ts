import { appendFileSync, existsSync, readFileSync } from "node:fs";

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

/**
 * Appends one effect as one JSON line. Each line is one `write(2)` on a file opened with
 * `O_APPEND`, and far below `PIPE_BUF`, so lines from several processes never interleave: the
 * log is the outside world's memory, independent of the store under test.
 */
export function appendEffect(path: string, effect: Effect): void {
  appendFileSync(path, JSON.stringify(effect) + "\n");
}

/** Every effect in the log, in the order they were appended (none if there is no log yet). */
export function readEffects(path: string): Effect[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Effect);
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
