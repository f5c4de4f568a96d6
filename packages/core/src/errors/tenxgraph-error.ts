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
 * True for any tenxgraph error, also one thrown by another copy of the package: it checks the
 * `code` field, not the prototype chain.
 */
export function isTenxgraphError(error: unknown): error is TenxgraphError {
  const code = error instanceof Error ? (error as unknown as { code?: unknown }).code : undefined;
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}
