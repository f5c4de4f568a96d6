import type { Checkpointer } from "@tenxgraph/core/storage";

/**
 * Per checkpointer method: the milliseconds during which at least one call of it was in flight
 * (calls that overlap count once), and the calls.
 */
export type StoreTimes = Map<string, { ms: number; calls: number }>;

/**
 * Wraps a checkpointer so the time spent inside each of its methods is summed in `times`.
 * `until: "returned"` (SqliteCheckpointer, whose better-sqlite3 work is synchronous and done
 * before the promise is returned) stops the clock when the method returns: the store's own work,
 * without the wait for other tools' microtasks. `until: "settled"` (an asynchronous store such
 * as PgCheckpointer) stops it when the returned promise settles, round trips included; sibling
 * tools' calls that wait together (one group commit) count their shared time once.
 */
export function timeCheckpointer(
  inner: Checkpointer,
  until: "returned" | "settled" = "returned",
): { store: Checkpointer; times: StoreTimes } {
  const times: StoreTimes = new Map();
  const clocks = new Map<string, MethodClock>();
  const store = new Proxy(inner, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        const clock = clocks.get(name) ?? new MethodClock(name, times);
        clocks.set(name, clock);
        clock.enter();
        let result: unknown;
        try {
          // Called on the target, not the proxy: the class keeps its state in #private fields.
          result = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          clock.leave();
          throw error;
        }
        if (until === "settled" && result instanceof Promise) {
          return result.finally(() => clock.leave());
        }
        clock.leave();
        return result;
      };
    },
  });
  return { store, times };
}

/** The time one method had a call in flight: runs from the first call in until the last out. */
class MethodClock {
  #inFlight = 0;
  #since = 0;

  constructor(
    readonly name: string,
    readonly times: StoreTimes,
  ) {}

  enter(): void {
    if (this.#inFlight++ === 0) this.#since = performance.now();
    this.#entry().calls++;
  }

  leave(): void {
    if (--this.#inFlight === 0) this.#entry().ms += performance.now() - this.#since;
  }

  /** The method's entry, made again if the caller cleared `times` meanwhile. */
  #entry() {
    const entry = this.times.get(this.name) ?? { ms: 0, calls: 0 };
    this.times.set(this.name, entry);
    return entry;
  }
}
