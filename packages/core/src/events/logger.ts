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
 * so a library embedded in someone's app stays quiet unless something is wrong. An error in a
 * record carries its type, message, code and cause; its stack only from `minLevel` `debug`,
 * since a failed run is one short line for an operator and the stack is for whoever debugs it.
 */
export function jsonLogger(minLevel: Level = "warn"): Logger {
  const replacer = errorsAsObjects(minLevel === "debug");
  const write = (level: Level) => (fields: object, message?: string) => {
    if (LEVELS[level] < LEVELS[minLevel]) return;
    const record = { level, time: new Date().toISOString(), msg: message, ...fields };
    process.stderr.write(`${JSON.stringify(record, replacer)}\n`);
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

/**
 * `JSON.stringify` writes an `Error` as `{}` (its fields are not enumerable); as pino does, keep
 * what an operator needs: its type, message, code and cause, and the stack when asked.
 */
function errorsAsObjects(withStack: boolean): (key: string, value: unknown) => unknown {
  return (_key, value) => {
    if (!(value instanceof Error)) return value;
    const { code } = value as { code?: unknown };
    return {
      type: value.name,
      message: value.message,
      ...(code === undefined ? {} : { code }),
      ...(withStack ? { stack: value.stack } : {}),
      ...(value.cause === undefined ? {} : { cause: value.cause }),
    };
  };
}

/** A logger that drops every record: for demos and tests that assert on results, not logs. */
export const silentLogger: Logger = Object.freeze({
  debug() {},
  info() {},
  warn() {},
  error() {},
});

/** A logger that adds `bound` to every record's fields. */
export function withFields(logger: Logger, bound: object): Logger {
  return new BoundLogger(logger, bound);
}

// A class rather than four closures: one is made per run, node and tool call.
class BoundLogger implements Logger {
  constructor(
    private readonly base: Logger,
    private readonly bound: object,
  ) {}

  debug(fields: object, message?: string): void {
    this.base.debug({ ...this.bound, ...fields }, message);
  }
  info(fields: object, message?: string): void {
    this.base.info({ ...this.bound, ...fields }, message);
  }
  warn(fields: object, message?: string): void {
    this.base.warn({ ...this.bound, ...fields }, message);
  }
  error(fields: object, message?: string): void {
    this.base.error({ ...this.bound, ...fields }, message);
  }
}
