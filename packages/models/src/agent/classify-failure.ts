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
 * - `transient`: worth another attempt (429, 408, 409, 5xx, a dropped connection, a stream
 *   that ended before its finish);
 * - `refused`: retrying cannot help (the provider said no: bad request, auth, unknown model,
 *   out of credits);
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
  // Out of credits arrives as a 429, but no wait refills the account: say so at once.
  if (isQuotaExhausted(error.data) || isQuotaExhausted(parseBody(error.responseBody))) {
    return { ...base, kind: "refused", retryAfterMs: null };
  }
  // Retryable before 2xx: a body cut off mid-stream fails with the 200 that started it, and
  // the SDK marks it retryable because it found a network error under it.
  if (error.isRetryable || isNetworkError(error.cause)) {
    return { ...base, kind: "transient", retryAfterMs: retryAfterMs(error.responseHeaders) };
  }
  // A 2xx the SDK could not process: the body was not the response it promised.
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    return { ...base, kind: "malformed", retryAfterMs: null };
  }
  return { ...base, kind: "refused", retryAfterMs: null };
}

/** A provider's error object: `{ message, type?, code?, status? }`. */
interface ProviderErrorObject {
  message: string;
  type?: unknown;
  code?: unknown;
  status?: unknown;
}

/**
 * An error object a provider sent inside a stream that had already started, such as OpenAI's
 * `{ type: "server_error", message }`, Anthropic's `overloaded_error`, LiteLLM's
 * `{ type: "None", code: "503" }` or vLLM's `{ type: "InternalServerError", code: 500 }`. An
 * HTTP status in `code` or `status` decides as it would on the response; else the words do.
 */
function providerObjectFailure(error: ProviderErrorObject): Failure {
  if (isQuotaExhausted(error)) return failure("refused", error, error.message);
  const statusCode = httpStatus(error.code) ?? httpStatus(error.status);
  if (statusCode !== null) {
    const kind = isRetryableStatus(statusCode) ? "transient" : "refused";
    return { ...failure(kind, error, error.message), statusCode };
  }
  const label = `${String(error.type ?? "")} ${String(error.code ?? "")}`;
  const transient = /server_error|rate_limit|overloaded|timeout|unavailable/i.test(label);
  return failure(transient ? "transient" : "refused", error, error.message);
}

/** The statuses the SDK retries on a response: timeout, conflict, rate limit, server errors. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** An HTTP status given as a number or a 3-digit string; `null` for anything else. */
function httpStatus(value: unknown): number | null {
  const status = typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof status === "number" && Number.isInteger(status) && status >= 100 && status < 600
    ? status
    : null;
}

/**
 * OpenAI's (and its imitators') "out of credits": `insufficient_quota` as the error's code or
 * type, on the object itself or under its `error` (the shape of a response body).
 */
function isQuotaExhausted(value: unknown, depth = 0): boolean {
  if (typeof value !== "object" || value === null) return false;
  const { code, type, error } = value as Record<string, unknown>;
  if (code === "insufficient_quota" || type === "insufficient_quota") return true;
  return depth === 0 && isQuotaExhausted(error, 1);
}

/** A response body as JSON, when it is JSON; the SDK leaves `data` unset for some providers. */
function parseBody(body: string | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
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

function isProviderErrorObject(value: unknown): value is ProviderErrorObject {
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
