import { ModelError } from "@tenxgraph/core";
import type { Failure } from "./classify-failure.js";
import type { RetryRefusal } from "./retry.js";

/** The error for a failure that is not retried: refused, failed, malformed or unusable. */
export function hardError(model: string, failure: Failure, attempts: number): ModelError {
  const status = failure.statusCode === null ? "" : ` (HTTP ${failure.statusCode})`;
  const details = { cause: failure.error, statusCode: failure.statusCode, attempts };
  switch (failure.kind) {
    case "malformed":
      return new ModelError(
        "MODEL_004",
        model,
        `the provider's response could not be read${status}: ${failure.message}`,
        details,
      );
    case "unusable":
      return new ModelError("MODEL_003", model, failure.message, details);
    case "failed":
      return new ModelError("MODEL_001", model, `the request failed: ${failure.message}`, details);
    default:
      return new ModelError(
        "MODEL_001",
        model,
        `the provider refused the request${status}: ${failure.message}`,
        details,
      );
  }
}

/** The error for transient failures that outlasted the retries, quoting the last one. */
export function exhaustedError(
  model: string,
  failure: Failure,
  attempts: number,
  reason: RetryRefusal,
  maxDelayMs: number,
): ModelError {
  const status = failure.statusCode === null ? "" : `HTTP ${failure.statusCode}: `;
  const why = {
    attempts: `gave up after ${attempts} attempt${attempts === 1 ? "" : "s"} (retry.maxAttempts)`,
    "retry-after":
      `the provider asked to retry after ${seconds(failure.retryAfterMs ?? 0)}, ` +
      `longer than retry.maxDelayMs (${seconds(maxDelayMs)})`,
    deadline: `gave up after ${attempts} attempt${attempts === 1 ? "" : "s"}: the next wait would outlast the node's deadline`,
  }[reason];
  return new ModelError("MODEL_005", model, `${why}; last error: ${status}${failure.message}`, {
    cause: failure.error,
    statusCode: failure.statusCode,
    attempts,
  });
}

/** The error for a request that ran past `requestTimeout`. */
export function timeoutError(model: string, timeoutMs: number, attempts: number): ModelError {
  return new ModelError(
    "MODEL_002",
    model,
    `no complete reply within requestTimeout (${seconds(timeoutMs)}); ` +
      `not retried, the node's deadline sits above it`,
    { attempts },
  );
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
