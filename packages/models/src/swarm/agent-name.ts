import type { AnyCompiledGraph } from "@tenxgraph/core";

/**
 * The names `createReactAgent({ name })` gave its graphs. A compiled graph has no name of its
 * own (a subgraph node is named by `addNode`); a swarm names its nodes by these.
 */
const names = new WeakMap<AnyCompiledGraph, string>();

/** Records `name` for `graph`; returns `graph`. */
export function withAgentName<G extends AnyCompiledGraph>(graph: G, name: string | undefined): G {
  if (name !== undefined) names.set(graph, name);
  return graph;
}

/** The name `createReactAgent({ name })` gave `graph`, if any. */
export function agentNameOf(graph: AnyCompiledGraph): string | undefined {
  return names.get(graph);
}
