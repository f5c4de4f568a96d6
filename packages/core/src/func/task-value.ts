import { findNonJson } from "../storage/json-check.js";

/**
 * A task's result as the ledger keeps it: the content of the call's recorded tool message,
 * written as JSON (`""` for `undefined`), so a replay returns the same value. Throws for a value
 * a store cannot keep as JSON (a BigInt, a function, a Map), which fails the task: a value that
 * would come back changed from a replay must not be handed on as if it were recorded.
 */
export function encodeTaskValue(value: unknown): string {
  if (value === undefined) return "";
  const problem = findNonJson(value, "result");
  if (problem !== null) throw new TypeError(`the task's result is not JSON (${problem})`);
  return JSON.stringify(value);
}

/**
 * The value a recorded result stands for. Results the task returned are JSON; an answer given
 * by an in-doubt policy (a human's `complete`, a `reconcile`) is recorded as the tool layer
 * writes it, a string as it is: a text that is not JSON is that string.
 */
export function decodeTaskValue(content: unknown): unknown {
  if (typeof content !== "string") return content;
  if (content === "") return undefined;
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}
