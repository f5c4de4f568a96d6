/** The least each setting may be: 0 for the event batch (every event written at once). */
const LEAST_SETTING = {
  concurrency: 1,
  heartbeatMs: 1,
  staleAfterMs: 1,
  pollIntervalMs: 1,
  eventBatchMs: 0,
} as const;

/** Throws a TypeError naming the first setting out of its bounds. */
export function checkTimings(options: Record<keyof typeof LEAST_SETTING, number>): void {
  for (const [name, least] of Object.entries(LEAST_SETTING)) {
    const value = options[name as keyof typeof LEAST_SETTING];
    if (!Number.isInteger(value) || value < least) {
      const what = least === 0 ? "a whole number of ms" : "a positive integer";
      throw new TypeError(`RunWorker: ${name} must be ${what}, got ${String(value)}`);
    }
  }
  if (options.staleAfterMs < 2 * options.heartbeatMs) {
    throw new TypeError(
      `RunWorker: staleAfterMs (${options.staleAfterMs}) must be at least twice heartbeatMs ` +
        `(${options.heartbeatMs}), or one late beat hands a live run to another worker`,
    );
  }
}
