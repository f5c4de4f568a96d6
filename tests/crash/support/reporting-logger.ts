import { jsonLogger, type Logger } from "@tenxgraph/core";
import { report } from "../../support/worker-process.js";

/**
 * Sends log records from `info` up to the parent: the in-doubt and record-failure warnings, and
 * the notes that say what a run is doing (replaying, waiting on another execution's claim).
 */
export function reportingLogger(): Logger {
  const send = (level: string) => (fields: object, msg?: string) => {
    const { err, ...rest } = fields as { err?: unknown };
    void report({ type: "log", level, msg: msg ?? "", ...rest, err: err ? String(err) : null });
  };
  return { debug() {}, info: send("info"), warn: send("warn"), error: send("error") };
}

/**
 * The store's own warnings (Redis outages, retries) as JSON lines on stderr, which a failing test
 * quotes; the error as text, since `JSON.stringify` drops an `Error`'s message.
 */
export function storeLogger(): Logger {
  const base = jsonLogger();
  const send = (level: keyof Logger) => (fields: object, msg?: string) => {
    const { err, ...rest } = fields as { err?: unknown };
    base[level](err === undefined ? rest : { ...rest, err: String(err) }, msg);
  };
  return { debug: send("debug"), info: send("info"), warn: send("warn"), error: send("error") };
}
