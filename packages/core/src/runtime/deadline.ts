import { setMaxListeners } from "node:events";

/**
 * Runs `work` under a signal that aborts when `parent` aborts or after `timeoutMs`, and settles
 * as soon as the signal aborts, whether or not `work` honours it. A task that ignores its
 * signal therefore cannot hold the caller; its late result is simply never looked at.
 */
export async function runWithDeadline<T>(
  work: (signal: AbortSignal) => Promise<T> | T,
  options: {
    parent: AbortSignal;
    timeoutMs: number | null;
    onTimeout: () => Error;
    /** The signal will be the parent of many tasks (a node's parallel tool calls). */
    manyChildren?: boolean;
  },
): Promise<T> {
  // Work under an aborted parent never starts: a stopped run must not begin a tool call.
  options.parent.throwIfAborted();
  const controller = new AbortController();
  // Each parallel call listens on its node's signal; many calls are not a leak.
  if (options.manyChildren) setMaxListeners(0, controller.signal);
  let rejectAborted!: (reason: unknown) => void;
  const aborted = new Promise<never>((_, reject) => (rejectAborted = reject));
  // Both abort sources are ours, so they settle the race directly: a listener on the fresh
  // signal would cost more than the rest of this function.
  const abort = (reason: unknown) => {
    controller.abort(reason);
    rejectAborted(reason);
  };
  const abortFromParent = () => abort(options.parent.reason);
  options.parent.addEventListener("abort", abortFromParent, { once: true });
  const cancelTimer =
    options.timeoutMs === null
      ? undefined
      : startTimer(options.timeoutMs, () => abort(options.onTimeout()));
  try {
    return await Promise.race([start(work, controller.signal), aborted]);
  } finally {
    cancelTimer?.();
    options.parent.removeEventListener("abort", abortFromParent);
  }
}

/** Calls `work` now; a synchronous throw becomes a rejection like an async one. */
function start<T>(work: (signal: AbortSignal) => Promise<T> | T, signal: AbortSignal): Promise<T> {
  try {
    return Promise.resolve(work(signal));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Node's timers overflow past 2^31 - 1 ms (about 24.8 days) and then fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fn` after `ms`, chaining timers for deadlines longer than one timer can hold. */
function startTimer(ms: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout;
  const arm = (remaining: number) => {
    timer = setTimeout(
      () => (remaining > MAX_TIMER_MS ? arm(remaining - MAX_TIMER_MS) : fn()),
      Math.min(remaining, MAX_TIMER_MS),
    );
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
