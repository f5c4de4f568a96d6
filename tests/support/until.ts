import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `check` until it gives a truthy value, and returns that value. Gives up after
 * `timeoutMs`, with an error naming `what` it waited for and, if given, `context()` (a child
 * process's output, say), read only then.
 */
export async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  options: { timeoutMs?: number; intervalMs?: number; context?: () => string } = {},
): Promise<Exclude<T, null | undefined | false | 0 | "">> {
  const { timeoutMs = 30_000, intervalMs = 25, context } = options;
  const giveUp = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, null | undefined | false | 0 | "">;
    if (Date.now() > giveUp) {
      const more = context ? `:\n${context()}` : "";
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}${more}`);
    }
    await sleep(intervalMs);
  }
}
