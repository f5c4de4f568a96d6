import { MAX_ID_LENGTH } from "@tenxgraph/core/storage";
import { z } from "zod";
import { ApiError } from "./api-error.js";

/**
 * Deepest nesting of arrays and objects accepted in a JSON body or WebSocket frame. State is
 * copied, merged and validated recursively, so a value nested thousands of levels deep would be
 * written and then fail every run on the thread; it is refused at the door instead.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Refuses JSON nested deeper than {@link MAX_JSON_DEPTH} with a 422 `JSON_TOO_DEEP` naming
 * `where`. Walks without recursion, so any depth is measured without exhausting the stack.
 */
export function requireJsonDepth(value: unknown, where: string): void {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [next, depth] = pending.pop()!;
    if (typeof next !== "object" || next === null) continue;
    if (depth + 1 > MAX_JSON_DEPTH) {
      throw new ApiError(
        422,
        "JSON_TOO_DEEP",
        `The ${where} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
        [{ loc: [where], msg: `deeper than ${MAX_JSON_DEPTH} levels`, type: "value_error" }],
      );
    }
    for (const inner of Object.values(next)) pending.push([inner, depth + 1]);
  }
}

// A lone surrogate (high not followed by low, low not preceded by high), or U+0000.
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be refused
const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;

/**
 * Why `value` cannot be an id (thread, user, message), or `null` when it can: 1 to
 * `MAX_ID_LENGTH` (256) characters, not blank, well-formed Unicode without U+0000, which is what
 * every store can hold exactly.
 */
export function idProblem(value: string): string | null {
  if (value.trim() === "") return "must not be blank";
  if (value.length > MAX_ID_LENGTH)
    return `is ${value.length} characters long; the limit is ${MAX_ID_LENGTH}`;
  if (UNSTORABLE.test(value)) return "holds U+0000 or a lone surrogate (not well-formed Unicode)";
  return null;
}

/**
 * A client-given id in a body (message, tool call): refused with a 422 naming its field when a
 * store could not hold it. An empty string passes: where allowed, it asks the server to mint one.
 */
export const bodyIdSchema = z.string().superRefine((id, ctx) => {
  const problem = id === "" ? null : idProblem(id);
  if (problem !== null) ctx.addIssue({ code: "custom", message: `id ${problem}` });
});

/** Refuses an id a store cannot hold with a 422 `VALIDATION_ERROR` naming its field (`loc`). */
export function requireValidId(value: string, loc: string[]): string {
  const problem = idProblem(value);
  if (problem === null) return value;
  const field = loc.slice(1).join(".") || loc.join(".");
  throw new ApiError(422, "VALIDATION_ERROR", `Invalid ${field}: ${problem}`, [
    { loc, msg: problem, type: "value_error" },
  ]);
}
