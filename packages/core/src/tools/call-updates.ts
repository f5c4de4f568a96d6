import type { Logger } from "../events/logger.js";
import { findNonJson } from "../storage/json-check.js";

/**
 * The updates one tool call makes with `ctx.update`, in order, until its tool settles. Each is
 * checked and stored as the JSON the ledger will hold, so the run that makes it and a replay
 * from the ledger apply the very same value. After the call settled (a tool that outlives its
 * deadline, or background work it left behind) an update is dropped with a warning: it comes
 * too late to be recorded with the result, and throwing there would only reach nobody.
 */
export class CallUpdates {
  readonly #updates: Record<string, unknown>[] = [];
  readonly #logger: Logger;
  readonly #tool: string;
  #closed = false;

  constructor(tool: string, logger: Logger) {
    this.#tool = tool;
    this.#logger = logger;
  }

  /** Checks `update` and keeps a copy of it; refuses `messages` and values a store cannot keep. */
  add(update: unknown): void {
    if (typeof update !== "object" || update === null || Array.isArray(update)) {
      throw new TypeError(`ctx.update in tool '${this.#tool}' takes an object of state fields`);
    }
    if (this.#closed) {
      this.#logger.warn(
        { tool: this.#tool, fields: Object.keys(update) },
        `ctx.update after tool '${this.#tool}' settled was dropped`,
      );
      return;
    }
    if (Object.hasOwn(update, "messages")) {
      throw new TypeError(
        `ctx.update in tool '${this.#tool}' cannot update 'messages': the transcript only grows ` +
          `by the tool's result, its message (return it from execute)`,
      );
    }
    const problem = findNonJson(update, "update");
    if (problem) {
      throw new TypeError(
        `ctx.update in tool '${this.#tool}' got a value that cannot be stored: ${problem}`,
      );
    }
    // As stored: a replay reads back JSON, so the first run applies JSON too (a Date a string).
    this.#updates.push(JSON.parse(JSON.stringify(update)) as Record<string, unknown>);
  }

  /** Ends the call: later updates are dropped, and the ones made so far are returned. */
  close(): Record<string, unknown>[] {
    this.#closed = true;
    return this.#updates.slice();
  }
}
