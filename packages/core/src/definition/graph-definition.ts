import type { Edge } from "./edges.js";
import type { NodeLike } from "./graph-node.js";
import type { BaseState, Reducers } from "./reducers.js";
import type { StateSchema } from "./state-schema.js";
import type { GraphVersion } from "../storage/checkpoint-record.js";
import type { ThreadMigrations } from "./graph-migrations.js";

/** A validated graph, frozen by `compile()`: what the run loop executes. */
export interface GraphDefinition<S extends BaseState> {
  nodes: ReadonlyMap<string, NodeLike<S>>;
  /** The ways out of each node, in the order they were added; every node has one at least. */
  edges: ReadonlyMap<string, readonly Edge<S>[]>;
  /** For each join's target (`addEdge([a, b], c)`), the sources it waits for. */
  joins: ReadonlyMap<string, readonly string[]>;
  /**
   * Where each node may send the run by returning a `Command` (`addNode(name, node, { ends })`):
   * a node with such places needs no edge.
   */
  ends: ReadonlyMap<string, readonly string[]>;
  entryPoint: string;
  reducers: Reducers<S>;
  initialState: Partial<Omit<S, "messages">>;
  /** The zod schema the state is checked against after the input and each node; null: none. */
  schema?: StateSchema | null;
  /** This graph's version (`graphVersion`), recorded with every checkpoint it writes. */
  version: GraphVersion;
  /** How threads of other versions carry over (`compile({ migrations })`). */
  migrations: ThreadMigrations;
}
