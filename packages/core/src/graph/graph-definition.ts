import type { Edge } from "./edges.js";
import type { NodeLike } from "./graph-node.js";
import type { BaseState, Reducers } from "./reducers.js";
import type { StateSchema } from "./state-schema.js";

/** A validated graph, frozen by `compile()`: what the run loop executes. */
export interface GraphDefinition<S extends BaseState> {
  nodes: ReadonlyMap<string, NodeLike<S>>;
  /** Exactly one way out of every node. */
  edges: ReadonlyMap<string, Edge<S>>;
  entryPoint: string;
  reducers: Reducers<S>;
  initialState: Partial<Omit<S, "messages">>;
  /** The zod schema the state is checked against after the input and each node; null: none. */
  schema?: StateSchema | null;
}
