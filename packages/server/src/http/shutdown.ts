/** What a graceful shutdown needs from the routes: a signal to end long waits, and the runs in progress. */
export interface ShutdownContext {
  /** Aborted when the server closes: long waits (run streams, joins) end then. */
  closing: AbortController;
  /** Runs in progress, so a shutdown can let them end. */
  activeRuns: Set<Promise<unknown>>;
}

/** Keeps `work` in `ctx.activeRuns` until it settles. */
export function track<T>(ctx: ShutdownContext, work: Promise<T>): Promise<T> {
  ctx.activeRuns.add(work);
  const forget = () => ctx.activeRuns.delete(work);
  work.then(forget, forget);
  return work;
}
