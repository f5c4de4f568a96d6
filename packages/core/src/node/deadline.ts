import { setMaxListeners } from "node:events";

/**
 * The signal of work under a deadline, made when first read. Making an AbortSignal costs more
 * than the rest of a tool call's bookkeeping (about 3.5 µs), and most tools never read theirs.
 */
export interface DeadlineScope {
  readonly signal: AbortSignal;
  /** `signal.aborted`, read without making the signal. */
  readonly aborted: boolean;
  /** `signal.reason`. */
  readonly reason: unknown;
}

/**
 * What aborts work under a deadline: a signal, or the scope of the work it is part of (a tool
 * call under its node's scope), which passes its abort on without making its signal.
 */
export type AbortParent = AbortSignal | DeadlineScope;

/**
 * Runs `work` under a signal that aborts when `parent` aborts or after `timeoutMs`, and settles
 * as soon as the signal aborts, whether or not `work` honours it. A task that ignores its
 * signal therefore cannot hold the caller; its late result is simply never looked at.
 */
export function runWithDeadline<T>(
  work: (scope: DeadlineScope) => Promise<T> | T,
  options: {
    parent: AbortParent;
    timeoutMs: number | null;
    onTimeout: () => Error;
    /**
     * The signal may get many listeners at once: a node's, where parallel calls waiting on a
     * claim or a user's node making many requests each listen on it.
     */
    manyChildren?: boolean;
    /**
     * Receives, before `work` starts, a function that aborts the work from outside with a reason
     * (as the parent's abort would): a heartbeat that finds the work's claim taken over uses it.
     */
    abortHandle?: (abort: (reason: unknown) => void) => void;
  },
): Promise<T> {
  // Work under an aborted parent never starts: a stopped run must not begin a tool call.
  if (options.parent.aborted) return Promise.reject(options.parent.reason);
  const scope = new LazyScope(options.manyChildren === true);
  // One promise settled by whichever comes first, the work or an abort; after that the other
  // is ignored. (A Promise.race against a never-settling "aborted" promise cost a third more.)
  return new Promise<T>((resolve, reject) => {
    let cancelTimer: (() => void) | undefined;
    const finish = () => {
      cancelTimer?.();
      forgetParent();
    };
    const abort = (reason: unknown) => {
      finish();
      scope.abort(reason);
      reject(reason);
    };
    const forgetParent = whenAborted(options.parent, () => abort(options.parent.reason));
    options.abortHandle?.(abort);
    if (options.timeoutMs !== null) {
      cancelTimer = startTimer(options.timeoutMs, () => abort(options.onTimeout()));
    }
    start(work, scope).then(
      (value) => {
        finish();
        resolve(value);
      },
      (error: unknown) => {
        finish();
        reject(error);
      },
    );
  });
}

/**
 * A scope whose signal is made when first read: an `AbortController` makes its signal at once,
 * so the controller waits too. Aborted before that, the signal is made aborted, with the first
 * reason, as it would have been.
 */
class LazyScope implements DeadlineScope {
  #controller: AbortController | undefined;
  #aborted: { reason: unknown } | undefined;
  readonly #manyChildren: boolean;
  /** What runs when this scope aborts: the work under it (see {@link whenAborted}). */
  #children: Set<() => void> | undefined;

  constructor(manyChildren: boolean) {
    this.#manyChildren = manyChildren;
  }

  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = new AbortController();
    this.#controller = controller;
    // Many listeners on a node's signal are its parallel work, not a leak.
    if (this.#manyChildren) setMaxListeners(0, controller.signal);
    if (this.#aborted) controller.abort(this.#aborted.reason);
    return controller.signal;
  }

  get aborted(): boolean {
    return this.#controller ? this.#controller.signal.aborted : this.#aborted !== undefined;
  }

  get reason(): unknown {
    // Aborted, the signal is made: its reason is what `AbortController` makes of the given one.
    return this.aborted ? this.signal.reason : undefined;
  }

  /** Calls `callback` once when this scope aborts, until the returned function forgets it. */
  onAbort(callback: () => void): () => void {
    const children = (this.#children ??= new Set());
    children.add(callback);
    return () => children.delete(callback);
  }

  abort(reason: unknown): void {
    if (this.#controller) this.#controller.abort(reason);
    else this.#aborted ??= { reason };
    const children = this.#children;
    this.#children = undefined;
    children?.forEach((abortChild) => abortChild());
  }
}

/** What runs when a parent signal aborts, for the children under it now. */
const childrenOf = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` when `signal` aborts, until the returned function forgets it. A parent gets
 * one listener for all its children (a node's tool calls, a run's nodes): adding and removing
 * an AbortSignal listener per child cost more than the rest of a call's bookkeeping.
 */
function whenAborted(parent: AbortParent, callback: () => void): () => void {
  // A scope keeps its children itself: its signal, which costs more than a tool call's
  // bookkeeping, is made only when something reads it.
  if (parent instanceof LazyScope) return parent.onAbort(callback);
  const signal = parent as AbortSignal;
  let children = childrenOf.get(signal);
  if (!children) {
    const registered = new Set<() => void>();
    childrenOf.set(signal, registered);
    signal.addEventListener("abort", () => registered.forEach((abortChild) => abortChild()), {
      once: true,
    });
    children = registered;
  }
  children.add(callback);
  return () => children.delete(callback);
}

/** Calls `work` now; a synchronous throw becomes a rejection like an async one. */
function start<T>(
  work: (scope: DeadlineScope) => Promise<T> | T,
  scope: DeadlineScope,
): Promise<T> {
  try {
    return Promise.resolve(work(scope));
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
