import type { Logger } from "@tenxgraph/core";
import { report } from "../../support/worker-process.js";

/** Warnings and errors go to the parent (the in-doubt and record-failure lines among them). */
export function reportingLogger(): Logger {
  const send = (level: string) => (fields: object, msg?: string) => {
    const { err, ...rest } = fields as { err?: unknown };
    void report({ type: "log", level, msg: msg ?? "", ...rest, err: err ? String(err) : null });
  };
  return { debug() {}, info() {}, warn: send("warn"), error: send("error") };
}
