import type { NodeContext } from "../node/node-context.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunServices } from "./run-services.js";

/**
 * The run a node runs in: its services and resolved config, from which a subgraph node makes
 * its child run (on the same store, with the same limits and signals). Kept beside the node's
 * runtime rather than in it: the ledger and the tools, which see only what a node gets, have
 * no use for the run loop's config.
 */
export interface NodeRun {
  readonly services: RunServices;
  readonly config: ResolvedRunConfig;
  /** The nodes of the graph the node runs in: where a child's handoff may send it. */
  readonly nodes: ReadonlyMap<string, unknown>;
}

const runs = new WeakMap<NodeContext, NodeRun>();

/** Makes `ctx` carry `run` for {@link nodeRunOf}; returns `ctx`. */
export function withNodeRun(ctx: NodeContext, run: NodeRun): NodeContext {
  runs.set(ctx, run);
  return ctx;
}

/** The run of a context the run loop made; fails for one made by hand, as `internalContext` does. */
export function nodeRunOf(ctx: NodeContext): NodeRun {
  const run = runs.get(ctx);
  if (!run) throw new TypeError("Subgraph.run: the context was not made by a graph run");
  return run;
}
