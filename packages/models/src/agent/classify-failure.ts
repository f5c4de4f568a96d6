import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  LoadSettingError,
  NoContentGeneratedError,
  RetryError,
  TypeValidationError,
} from "ai";
import { retryAfterMs } from "./retry.js";

/**
 * What a failed model request means for the node:
 * - `transient`: worth another attempt (429, 408, 409, 5xx, a dropped connection);
 * - `refused`: retrying cannot help (the provider said no: bad request, auth, unknown model);
 * - `malformed`: the provider answered, but not with a valid response;
 * - `unusable`: the model cannot be called as configured (no API key);
 * - `failed`: anything else (not retried: an unknown error is more likely a bug than a blip).
 */
export interface Failure {
  kind: "transient" | "refused" | "malformed" | "unusable" | "failed";
  /** The provider's message, or the error's. */
  message: string;
  statusCode: number | null;
  /** The wait the provider asked for, in ms. */
  retryAfterMs: number | null;
  error: unknown;
}

// Errors of Node's sockets and of undici (fetch) for a connection that failed or dropped.
const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** Sorts an error from the AI SDK (thrown, or an `error` part of the stream) into a {@link Failure}. */
export function classifyFailure(error: unknown): Failure {
  // The SDK's retry wrapper is off (maxRetries: 0), but unwrap it should a provider use it.
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(cause)) return apiCallFailure(cause);
  if (LoadAPIKeyError.isInstance(cause) || LoadSettingError.isInstance(cause)) {
    return failure("unusable", cause);
  }
  if (
    JSONParseError.isInstance(cause) ||
    TypeValidationError.isInstance(cause) ||
    InvalidResponseDataError.isInstance(cause) ||
    EmptyResponseBodyError.isInstance(cause) ||
    NoContentGeneratedError.isInstance(cause)
  ) {
    return failure("malformed", cause);
  }
  if (isNetworkError(cause)) return failure("transient", cause);
  if (isProviderErrorObject(cause)) return providerObjectFailure(cause);
  return failure("failed", cause);
}

function apiCallFailure(error: APICallError): Failure {
  const statusCode = error.statusCode ?? null;
  const base = { message: error.message, statusCode, error };
  // A 2xx the SDK could not process: the body was not the response it promised.
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    return { ...base, kind: "malformed", retryAfterMs: null };
  }
  if (error.isRetryable) {
    return { ...base, kind: "transient", retryAfterMs: retryAfterMs(error.responseHeaders) };
  }
  return { ...base, kind: "refused", retryAfterMs: null };
}

/**
 * An error object a provider sent inside a stream that had already started, such as OpenAI's
 * `{ type: "server_error", message }` or Anthropic's `overloaded_error`.
 */
function providerObjectFailure(error: { message: string; type?: unknown; code?: unknown }) {
  const label = `${String(error.type ?? "")} ${String(error.code ?? "")}`;
  const transient = /server_error|rate_limit|overloaded|timeout|unavailable/i.test(label);
  return failure(transient ? "transient" : "refused", error, error.message);
}

function isNetworkError(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
    // undici ends a body cut off mid-way with `TypeError: terminated`.
    if (e instanceof TypeError && e.message === "terminated") return true;
    e = e.cause;
  }
  return false;
}

function isProviderErrorObject(value: unknown): value is { message: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Error) &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

function failure(kind: Failure["kind"], error: unknown, message?: string): Failure {
  const text = message ?? (error instanceof Error ? error.message : String(error));
  return { kind, message: text, statusCode: null, retryAfterMs: null, error };
}
