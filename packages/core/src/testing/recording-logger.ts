import type { Logger } from "../events/logger.js";

/** One record a {@link RecordingLogger} received. */
export interface LogRecord {
  level: "debug" | "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string;
}

/**
 * A pino-shaped logger that keeps its records, for assertions on structured fields, and can wait
 * for a record to arrive (from a run still going on).
 */
export interface RecordingLogger extends Logger {
  readonly records: LogRecord[];
  /** Records at `level` whose message contains `text`. */
  find(level: LogRecord["level"], text: string): LogRecord[];
  /** The first record (kept or still to come) for which `matches` holds. */
  next(matches: (record: LogRecord) => boolean, timeoutMs?: number): Promise<LogRecord>;
}

export function recordingLogger(): RecordingLogger {
  const records: LogRecord[] = [];
  const waiters = new Set<() => void>();
  const write =
    (level: LogRecord["level"]) =>
    (fields: object, message?: string): void => {
      records.push({
        level,
        fields: { ...fields } as Record<string, unknown>,
        message: message ?? "",
      });
      for (const check of [...waiters]) check();
    };
  return {
    records,
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    find: (level, text) => records.filter((r) => r.level === level && r.message.includes(text)),
    next: (matches, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching log record after ${timeoutMs} ms`));
        }, timeoutMs);
        function check() {
          const found = records.find(matches);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        }
        waiters.add(check);
        check();
      }),
  };
}
