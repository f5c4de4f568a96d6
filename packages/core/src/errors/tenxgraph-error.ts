import { ERROR_CODES, type ErrorCode } from "./codes.js";

/** Base of every error tenxgraph throws. `code` is stable; check it with {@link isTenxgraphError}. */
export class TenxgraphError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * True for any tenxgraph error, or with `code` for one with that code. It checks the `code`
 * field, not the prototype chain, so it also recognises an error thrown by another copy of the
 * package (two versions installed side by side) or made in another realm (a `vm` context):
 * check errors with it, never with `instanceof`.
 *
 * @example
 * try {
 *   await app.invoke(input, { threadId });
 * } catch (error) {
 *   if (isTenxgraphError(error, "STORAGE_CONFLICT_001")) return retryLater();
 *   throw error;
 * }
 */
export function isTenxgraphError<C extends ErrorCode = ErrorCode>(
  error: unknown,
  code?: C,
): error is TenxgraphError & { readonly code: C } {
  // Object.prototype.toString sees the internal error slot, which no realm boundary hides.
  if (Object.prototype.toString.call(error) !== "[object Error]") return false;
  const found = (error as { code?: unknown }).code;
  if (typeof found !== "string" || !Object.hasOwn(ERROR_CODES, found)) return false;
  return code === undefined || found === code;
}
