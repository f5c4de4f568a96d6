import { GraphValidationError } from "../errors/errors.js";
import { END, normalizePathMap, type Edge, type Router } from "./edges.js";
import type { NodeLike } from "./graph-node.js";
import type { BaseState, Reducers } from "./reducers.js";
import { validateGraph } from "./validate.js";
import { CompiledGraph, type CompileOptions } from "./compiled-graph.js";

/** Options of a graph's state. */
export interface StateOptions<S extends BaseState> {
  /** Per-field reducers; fields without one are replaced by updates. `messages` always appends. */
  reducers?: Reducers<S>;
  /** Values a new thread starts with (besides an empty transcript). */
  initialState?: Partial<Omit<S, "messages">>;
}

/**
 * Builds a graph of nodes. Each node gets the state and returns an update; edges pick the next
 * node; `compile()` checks the graph and returns the runnable app.
 *
 * @example
 * const app = new StateGraph()
 *   .addNode("MAIN", model)
 *   .addNode("TOOL", new ToolNode([chargeCard]))
 *   .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
 *   .addEdge("TOOL", "MAIN")
 *   .setEntryPoint("MAIN")
 *   .compile({ checkpointer });
 */
export class StateGraph<S extends BaseState = BaseState & Record<string, unknown>> {
  readonly #nodes = new Map<string, NodeLike<S>>();
  readonly #edges = new Map<string, Edge<S>[]>();
  readonly #options: StateOptions<S>;
  #entryPoint: string | null = null;

  constructor(options: StateOptions<S> = {}) {
    this.#options = { ...options };
  }

  /** Adds a node: a function `(state, ctx) => update` or an object with `run` (e.g. `ToolNode`). */
  addNode(name: string, node: NodeLike<S>): this {
    if (name === END || name.trim() === "") {
      throw new GraphValidationError(
        "GRAPH_003",
        `'${name}' cannot be a node name: it is reserved or empty`,
      );
    }
    if (this.#nodes.has(name)) {
      throw new GraphValidationError("GRAPH_003", `A node named '${name}' already exists`);
    }
    if (typeof node !== "function" && typeof (node as { run?: unknown })?.run !== "function") {
      throw new GraphValidationError(
        "GRAPH_003",
        `Node '${name}' must be a function or an object with run()`,
      );
    }
    this.#nodes.set(name, node);
    return this;
  }

  /** After `from`, always go to `to` (a node or `END`). */
  addEdge(from: string, to: string): this {
    return this.#addEdge(from, { kind: "direct", to });
  }

  /**
   * After `from`, go where `router` says. With a path map, the router returns one of its keys
   * (record form) or one of its values (array form); compile() checks every destination.
   */
  addConditionalEdges(
    from: string,
    router: Router<S>,
    pathMap?: Record<string, string> | readonly string[],
  ): this {
    return this.#addEdge(from, { kind: "conditional", router, pathMap: normalizePathMap(pathMap) });
  }

  setEntryPoint(name: string): this {
    this.#entryPoint = name;
    return this;
  }

  /** Validates the graph (coded `GraphValidationError`s) and returns the runnable app. */
  compile(options: CompileOptions = {}): CompiledGraph<S> {
    const shape = { nodes: this.#nodes, edges: this.#edges, entryPoint: this.#entryPoint };
    validateGraph(shape);
    return new CompiledGraph<S>(
      {
        nodes: new Map(this.#nodes),
        edges: new Map([...this.#edges].map(([from, edges]) => [from, edges[0]!])),
        entryPoint: this.#entryPoint!,
        reducers: { ...this.#options.reducers } as Reducers<S>,
        initialState: { ...this.#options.initialState },
      },
      options,
    );
  }

  #addEdge(from: string, edge: Edge<S>): this {
    const existing = this.#edges.get(from) ?? [];
    this.#edges.set(from, [...existing, edge]);
    return this;
  }
}
