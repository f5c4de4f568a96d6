import type { FaultContext, FaultInjector, FaultPointName } from "../node/fault-points.js";

/** What an armed point does when reached: throw, wait, or end the process. */
export type FaultAction = (context: FaultContext) => void | Promise<void>;

interface Armed {
  action: FaultAction;
  when: (context: FaultContext) => boolean;
  remaining: number;
}

/**
 * Fault points armed per compiled graph (never globally): pass to `compile({ faultPoints })`.
 *
 * @example
 * const faults = new FaultPoints().arm("tool.after_return", () => process.kill(process.pid, "SIGKILL"), {
 *   when: (at) => at.toolName === "charge_card",
 * });
 */
export class FaultPoints implements FaultInjector {
  readonly #armed = new Map<FaultPointName, Armed[]>();
  readonly #hits = new Map<FaultPointName, number>();

  /**
   * Arms `point`; `times` limits how often this arming fires (default: every time `when`
   * holds). A point may be armed several times, e.g. for different tools: each arming whose
   * `when` holds fires, in the order they were armed.
   */
  arm(
    point: FaultPointName,
    action: FaultAction,
    options: { when?: (context: FaultContext) => boolean; times?: number } = {},
  ): this {
    const armed = this.#armed.get(point) ?? [];
    armed.push({
      action,
      when: options.when ?? (() => true),
      remaining: options.times ?? Infinity,
    });
    this.#armed.set(point, armed);
    return this;
  }

  /** Removes every arming of `point`. */
  disarm(point: FaultPointName): this {
    this.#armed.delete(point);
    return this;
  }

  /** How often the runtime reached `point`, armed or not. */
  hits(point: FaultPointName): number {
    return this.#hits.get(point) ?? 0;
  }

  async hit(point: FaultPointName, context: FaultContext): Promise<void> {
    this.#hits.set(point, this.hits(point) + 1);
    for (const armed of this.#armed.get(point) ?? []) {
      if (armed.remaining <= 0 || !armed.when(context)) continue;
      armed.remaining -= 1;
      await armed.action(context);
    }
  }
}
