/**
 * The logging surface tenxgraph writes to: pino's `(fields, message)` call shape, so a pino
 * logger can be passed as is. Fields always carry `threadId` and `runId`, and `node` or
 * `toolCallId` where they apply.
 */
export interface Logger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;
type Level = keyof typeof LEVELS;

/**
 * The default logger: one JSON line per record on stderr, from `minLevel` up (default `warn`),
 * so a library embedded in someone's app stays quiet unless something is wrong.
 */
export function jsonLogger(minLevel: Level = "warn"): Logger {
  const write = (level: Level) => (fields: object, message?: string) => {
    if (LEVELS[level] < LEVELS[minLevel]) return;
    const record = { level, time: new Date().toISOString(), msg: message, ...fields };
    process.stderr.write(`${JSON.stringify(record)}\n`);
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

/** A logger that adds `bound` to every record's fields. */
export function withFields(logger: Logger, bound: object): Logger {
  return {
    debug: (fields, message) => logger.debug({ ...bound, ...fields }, message),
    info: (fields, message) => logger.info({ ...bound, ...fields }, message),
    warn: (fields, message) => logger.warn({ ...bound, ...fields }, message),
    error: (fields, message) => logger.error({ ...bound, ...fields }, message),
  };
}
