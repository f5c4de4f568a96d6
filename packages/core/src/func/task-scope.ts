import { AsyncLocalStorage } from "node:async_hooks";
import type { InternalNodeContext } from "../node/node-context.js";
import { FuncError } from "./func-error.js";

/** The running entrypoint a task call belongs to. */
interface EntrypointScope {
  readonly ctx: InternalNodeContext;
  /** Tasks called so far in this run of the entrypoint: the next one's place in the order. */
  calls: number;
  /** Task calls not settled yet: the node waits for them before it ends (see `withEntrypointScope`). */
  readonly going: Set<Promise<unknown>>;
}

/** Inside a task's own function: no task may be called there (see `FUNC_001`). */
const IN_TASK = Symbol("in a task");

const scopes = new AsyncLocalStorage<EntrypointScope | typeof IN_TASK>();

/**
 * Runs the entrypoint's function with task calls bound to its node's context, and waits, however
 * it ends, until every task it called has settled: a task still running when the function
 * returned or threw (one it did not await, a sibling of one that paused) is recorded before the
 * node ends, as every call of a `ToolNode` is, instead of being left in doubt.
 */
export async function withEntrypointScope<T>(
  ctx: InternalNodeContext,
  fn: () => T | Promise<T>,
): Promise<T> {
  const scope: EntrypointScope = { ctx, calls: 0, going: new Set() };
  try {
    return await scopes.run(scope, fn);
  } finally {
    while (scope.going.size > 0) await Promise.allSettled([...scope.going]);
  }
}

/** Counts `call` as going until it settles (see {@link withEntrypointScope}). */
export function trackTask<T>(call: Promise<T>): Promise<T> {
  const scope = scopes.getStore();
  if (!scope || scope === IN_TASK) return call;
  scope.going.add(call);
  const forget = () => scope.going.delete(call);
  call.then(forget, forget);
  return call;
}

/** Runs a task's function where calling another task is refused. */
export function insideTask<T>(fn: () => T): T {
  return scopes.run(IN_TASK, fn);
}

/**
 * The context of the running entrypoint and this call's place in its order (0 for the first
 * task called). The place is taken when the task is called, before anything awaits, so tasks
 * started together (`Promise.all`) get the same places on every replay.
 */
export function takeTaskPlace(taskName: string): { ctx: InternalNodeContext; index: number } {
  const scope = scopes.getStore();
  if (scope === IN_TASK) {
    throw new FuncError(
      "FUNC_001",
      `task '${taskName}' was called inside another task: a task's result is recorded, so the ` +
        `tasks it calls would not run on a replay; call both from the entrypoint`,
    );
  }
  if (!scope) {
    throw new FuncError(
      "FUNC_001",
      `task '${taskName}' was called outside a running entrypoint: call it from the function ` +
        `given to entrypoint(), and run that with invoke() or stream()`,
    );
  }
  return { ctx: scope.ctx, index: scope.calls++ };
}
