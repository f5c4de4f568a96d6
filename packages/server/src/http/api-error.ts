import { isTenxgraphError } from "@tenxgraph/core";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";

import type { ErrorDetail } from "@tenxgraph/client";

/** One entry of an error's `details`, as FastAPI validation errors read on the wire. */
export type { ErrorDetail };

/**
 * An error with an HTTP status and a stable code, answered with the contract's error envelope
 * (`{ error: { code, message, details }, metadata }`).
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ApiError";
  }
}

/** A 422 `VALIDATION_ERROR` listing every zod issue with where it is (`body.config.thread_id`). */
export function validationError(where: string, error: z.ZodError): ApiError {
  const details = error.issues.map((issue) => ({
    loc: [where, ...issue.path.map(String)],
    msg: issue.message,
    type: issue.code,
  }));
  const first = details[0];
  const message = first
    ? `Invalid ${where}: ${first.loc.slice(1).join(".") || where}: ${first.msg}`
    : `Invalid ${where}`;
  return new ApiError(422, "VALIDATION_ERROR", message, details);
}

/**
 * The status a tenxgraph error maps to. A conflict with another execution is 409 so a client can
 * retry; a write into another user's thread is 403; bad input is 422; a thread that is not there
 * is 404; the rest are server failures.
 */
export function statusOfCode(code: string): ContentfulStatusCode {
  if (code === "STORAGE_CONFLICT_001" || code === "TOOL_CONFLICT_001") return 409;
  if (code === "STORAGE_OWNER_001") return 403;
  if (code === "THREAD_002" || code === "THREAD_003" || code === "THREAD_006") return 409;
  if (code === "THREAD_008") return 409;
  // A busy thread, an ended run: the run routes answer THREAD_BUSY and RUN_ENDED.
  if (code === "RUNS_001" || code === "RUNS_002") return 409;
  if (code === "THREAD_001" || code === "THREAD_005") return 404;
  if (code.startsWith("RESUME_") || code === "INPUT_001") return 422;
  if (code === "STORE_002") return 422;
  // The store's embedding model failed: an upstream failure.
  if (code === "STORE_003") return 502;
  return 500;
}

/** Any thrown value as an {@link ApiError}; unknown failures become a 500 without internals. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isTenxgraphError(error)) {
    return new ApiError(statusOfCode(error.code), error.code, error.message, [], { cause: error });
  }
  return new ApiError(500, "INTERNAL_ERROR", "Internal server error", [], { cause: error });
}
