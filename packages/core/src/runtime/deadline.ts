/**
 * Runs `work` under a signal that aborts when `parent` aborts or after `timeoutMs`, and settles
 * as soon as the signal aborts, whether or not `work` honours it. A task that ignores its
 * signal therefore cannot hold the caller; its late result is simply never looked at.
 */
export async function runWithDeadline<T>(
  work: (signal: AbortSignal) => Promise<T> | T,
  options: { parent: AbortSignal; timeoutMs: number | null; onTimeout: () => Error },
): Promise<T> {
  const controller = new AbortController();
  const { signal } = controller;
  const abortFromParent = () => controller.abort(options.parent.reason);
  if (options.parent.aborted) abortFromParent();
  else options.parent.addEventListener("abort", abortFromParent, { once: true });
  const timer =
    options.timeoutMs === null
      ? undefined
      : setTimeout(() => controller.abort(options.onTimeout()), options.timeoutMs);
  try {
    return await Promise.race([Promise.resolve().then(() => work(signal)), rejectOnAbort(signal)]);
  } finally {
    clearTimeout(timer);
    options.parent.removeEventListener("abort", abortFromParent);
    // Settles the pending abort promise so it does not keep closures alive.
    if (!signal.aborted) controller.abort(SETTLED);
  }
}

const SETTLED = Symbol("settled");

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const onAbort = () => {
      if (signal.reason !== SETTLED) reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
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
