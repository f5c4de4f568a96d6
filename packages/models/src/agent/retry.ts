/**
 * How a model node retries transient provider failures (429, 5xx, network errors). The AI SDK's
 * own retries are turned off (`maxRetries: 0`), so this policy is the only one: its waits honour
 * `retry-after`, are bounded, and end at once when the node's signal aborts.
 */
export interface RetryOptions {
  /** Requests per model step, the first included (default 3; 1 disables retries). */
  maxAttempts: number;
  /** Wait before the first retry; doubled for each later one (default 1000 ms). */
  initialDelayMs: number;
  /**
   * Longest wait between two attempts (default 30 000 ms). A provider asking, by `retry-after`,
   * for a longer wait fails the step at once instead of holding the node into its deadline.
   */
  maxDelayMs: number;
}

/** The retry policy used when a model node sets none. */
export const DEFAULT_RETRY: Readonly<RetryOptions> = Object.freeze({
  maxAttempts: 3,
  initialDelayMs: 1000,
  maxDelayMs: 30_000,
});

/** Fills in defaults and checks each field; throws a `TypeError` naming a bad one. */
export function resolveRetry(retry: Partial<RetryOptions> | undefined): Readonly<RetryOptions> {
  const resolved = { ...DEFAULT_RETRY, ...retry };
  const check = (field: keyof RetryOptions, ok: boolean, what: string) => {
    if (!ok) throw new TypeError(`retry.${field} must be ${what}, got ${String(resolved[field])}`);
  };
  check(
    "maxAttempts",
    Number.isInteger(resolved.maxAttempts) && resolved.maxAttempts >= 1,
    "an integer >= 1",
  );
  check("initialDelayMs", isDelay(resolved.initialDelayMs), "a number of ms >= 0");
  check("maxDelayMs", isDelay(resolved.maxDelayMs), "a number of ms >= 0");
  return Object.freeze(resolved);
}

function isDelay(value: unknown): boolean {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/** What to do after attempt `attempt` failed with a transient error. */
export type RetryDecision =
  | { retry: true; delayMs: number }
  | { retry: false; reason: RetryRefusal; retryAfterMs: number | null };

/** Why a transient failure is not retried: attempts used up, or a wait too long to make. */
export type RetryRefusal = "attempts" | "retry-after" | "deadline";

/**
 * Decides whether to retry after the `attempt`-th request (1-based) failed transiently. The
 * wait is exponential with jitter (half fixed, half random, so many clients that failed
 * together do not retry together), capped by `maxDelayMs`; a provider's `retry-after` replaces
 * it, since retrying earlier would only be refused again. A wait that would outlast the node's
 * deadline (`remainingMs`, `null` without one) is not started: the step fails now, with the
 * provider's error, instead of later with a timeout.
 */
export function decideRetry(
  attempt: number,
  options: Readonly<RetryOptions>,
  retryAfterMs: number | null,
  remainingMs: number | null = null,
  random: () => number = Math.random,
): RetryDecision {
  if (attempt >= options.maxAttempts) return { retry: false, reason: "attempts", retryAfterMs };
  let delayMs: number;
  if (retryAfterMs !== null) {
    if (retryAfterMs > options.maxDelayMs) {
      return { retry: false, reason: "retry-after", retryAfterMs };
    }
    delayMs = retryAfterMs;
  } else {
    const exponential = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** (attempt - 1));
    delayMs = exponential / 2 + (random() * exponential) / 2;
  }
  if (remainingMs !== null && delayMs >= remainingMs) {
    return { retry: false, reason: "deadline", retryAfterMs };
  }
  return { retry: true, delayMs };
}

/**
 * The wait a response asks for, in ms: `retry-after-ms` (OpenAI), else `retry-after` as seconds
 * or as an HTTP date. `null` when there is none or it cannot be read; a date in the past is 0.
 */
export function retryAfterMs(
  headers: Record<string, string> | undefined,
  now: number = Date.now(),
): number | null {
  if (!headers) return null;
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v.trim()]));
  const ms = lower.get("retry-after-ms");
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const value = lower.get("retry-after");
  if (value === undefined || value === "") return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its day and month; without letters `Date.parse` reads "-3" as a year.
  if (!/[A-Za-z]/.test(value)) return null;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
