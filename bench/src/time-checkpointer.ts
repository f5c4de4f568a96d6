import type { Checkpointer } from "@tenxgraph/core";

/** Per checkpointer method: milliseconds spent inside it, summed over its calls, and the calls. */
export type StoreTimes = Map<string, { ms: number; calls: number }>;

/**
 * Wraps a checkpointer so the time spent inside each of its methods is summed in `times`.
 * SqliteCheckpointer does all its work synchronously before returning the promise (better-sqlite3
 * is synchronous), so the clock stops when the method returns, not when the promise settles:
 * the figure is the store's own work, without the wait for other tools' microtasks.
 */
export function timeCheckpointer(inner: Checkpointer): { store: Checkpointer; times: StoreTimes } {
  const times: StoreTimes = new Map();
  const store = new Proxy(inner, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        const started = performance.now();
        try {
          // Called on the target, not the proxy: the class keeps its state in #private fields.
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        } finally {
          const entry = times.get(name) ?? { ms: 0, calls: 0 };
          entry.ms += performance.now() - started;
          entry.calls++;
          times.set(name, entry);
        }
      };
    },
  });
  return { store, times };
}
