import { appendFileSync, existsSync, readFileSync } from "node:fs";

/**
 * Appends one effect as one JSON line: the outside world's memory, independent of the store
 * under test. `appendFileSync` returns once the write reached the kernel, so a SIGKILL right
 * after it cannot undo it; each line is one `write(2)` with `O_APPEND`, well below `PIPE_BUF`,
 * so lines from several processes never interleave.
 */
export function appendEffect(path: string, effect: object): void {
  appendFileSync(path, `${JSON.stringify(effect)}\n`);
}

/** Every effect in the log, oldest first (none when the file does not exist yet). */
export function readEffects<Effect>(path: string): Effect[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Effect);
}
