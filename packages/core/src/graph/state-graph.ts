import { GraphValidationError } from "../errors/errors.js";
import {
  END,
  START,
  normalizePathMap,
  type Edge,
  type Router,
  type RouterChoice,
} from "../definition/edges.js";
import type { NodeLike } from "../definition/graph-node.js";
import type { BaseState, Reducers } from "../definition/reducers.js";
import {
  fieldsSchema,
  requireStateSchema,
  schemaDefaults,
  type StateOf,
  type StateSchema,
} from "../definition/state-schema.js";
import { isCompiledGraph, Subgraph } from "./subgraph.js";
import { validateGraph } from "../definition/validate.js";
import { graphVersion } from "../definition/graph-version.js";
import { compileMigrations } from "../definition/graph-migrations.js";
import { CompiledGraph } from "./compiled-graph.js";
import {
  requireCompileOptions,
  requireVersionName,
  type CompileOptions,
} from "./compile-options.js";

/** A compiled graph of any state, as `addNode` takes it: a subgraph's state is its own. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type AnyCompiledGraph = CompiledGraph<any>;

/** Options of `addNode`. */
export interface NodeOptions {
  /**
   * Where the node may send the run by returning a `Command` with `goto` (LangGraph.js's
   * `ends`): a node that routes only that way needs no edge, and compile() checks the names.
   */
  ends?: readonly string[];
}

/** Options of a graph's state. */
export interface StateOptions<S extends BaseState> {
  /** Per-field reducers; fields without one are replaced by updates. `messages` always appends. */
  reducers?: Reducers<S>;
  /** Values a new thread starts with (besides an empty transcript); over a schema's defaults. */
  initialState?: Partial<Omit<S, "messages">>;
}

/** The state of `new StateGraph()` with no schema and no type argument. */
export type DefaultState = BaseState & Record<string, unknown>;

/**
 * The names an edge may use: the nodes added so far. Before any `addNode` in the type (a graph
 * built statement by statement, or typed `StateGraph<S>`), and once a name was a plain `string`
 * (a graph built in a loop), any string: compile() still checks every name.
 */
export type KnownNode<N extends string> = [N] extends [never] ? string : N;

/** Where an edge may lead: a known node or `END`. */
export type EdgeTarget<N extends string> = KnownNode<N> | typeof END;

/** A conditional edge's path map: router result to node (record), or the nodes it may return (array). */
export type PathMap = Readonly<Record<string, string>> | readonly string[];

/** The literal names in `T` that are not in `Allowed`; none for a widened `string`. */
type Unknown<T extends string, Allowed> = string extends T ? never : Exclude<T, Allowed>;

/**
 * What is wrong with a conditional edge, or `never`: a destination (the router's literal
 * results, or the path map's nodes) that is neither a node added before nor `END`, or a router
 * result outside its path map. Widened `string`s are left to compile() and the run.
 */
type RouteProblem<N extends string, T extends string, P extends PathMap> = [P] extends [never]
  ? Unknown<T, EdgeTarget<N>> extends infer U extends string
    ? [U] extends [never]
      ? never
      : `unknown node '${U}': add it with addNode() before this edge`
    : never
  : P extends readonly string[]
    ? [Unknown<P[number], EdgeTarget<N>>] extends [never]
      ? [Unknown<T, P[number]>] extends [never]
        ? never
        : `the router returns '${Unknown<T, P[number]>}', which is not in the path map`
      : `unknown node '${Unknown<P[number], EdgeTarget<N>>}': add it with addNode() before this edge`
    : [Unknown<P[keyof P] & string, EdgeTarget<N>>] extends [never]
      ? [Unknown<T, keyof P>] extends [never]
        ? never
        : `the router returns '${Unknown<T, keyof P & string>}', which is not a key of the path map`
      : `unknown node '${Unknown<P[keyof P] & string, EdgeTarget<N>>}': add it with addNode() before this edge`;

/**
 * The source of a conditional edge: a known node, or, when the edge has a problem, the
 * problem's description (so the type error at `from` says what is wrong).
 */
type CheckedSource<N extends string, T extends string, P extends PathMap> = [
  RouteProblem<N, T, P>,
] extends [never]
  ? KnownNode<N>
  : RouteProblem<N, T, P>;

/** The graph builder's methods. `S` is the state, `N` the node names added so far. */
class StateGraphBuilder<S extends BaseState, N extends string> {
  readonly #nodes = new Map<string, NodeLike<S>>();
  readonly #edges = new Map<string, Edge<S>[]>();
  readonly #joins = new Map<string, string[]>();
  readonly #ends = new Map<string, string[]>();
  readonly #options: StateOptions<S>;
  readonly #schema: StateSchema | null;
  #entryPoint: string | null = null;

  constructor(schemaOrOptions?: StateSchema | StateOptions<S>, options?: StateOptions<S>) {
    // Anything zod-like is taken for a schema, so `z.string()` is refused rather than ignored.
    if (typeof (schemaOrOptions as { safeParse?: unknown })?.safeParse === "function") {
      requireStateSchema(schemaOrOptions);
      this.#schema = fieldsSchema(schemaOrOptions);
      const defaults = schemaDefaults(this.#schema) as Partial<Omit<S, "messages">>;
      this.#options = { ...options, initialState: { ...defaults, ...options?.initialState } };
    } else {
      this.#schema = null;
      this.#options = { ...(schemaOrOptions as StateOptions<S> | undefined) };
    }
  }

  /**
   * Adds a node: a function `(state, ctx) => update`, an object with `run` (e.g. `ToolNode`), or
   * a compiled graph (a subgraph, sharing the keys both states have; see `Subgraph` to map them).
   * The graph it returns knows the name, so later edges are checked against it.
   */
  addNode<const K extends string>(
    name: K,
    node: NodeLike<S> | AnyCompiledGraph,
    options: NodeOptions = {},
  ): StateGraph<S, N | K> {
    if (name === END || name === START || name.trim() === "") {
      throw new GraphValidationError(
        "GRAPH_003",
        `'${name}' cannot be a node name: it is reserved or empty`,
      );
    }
    if (this.#nodes.has(name)) {
      throw new GraphValidationError("GRAPH_003", `A node named '${name}' already exists`);
    }
    const runnable: NodeLike<S> = isCompiledGraph(node)
      ? new Subgraph<S>(node)
      : (node as NodeLike<S>);
    if (
      typeof runnable !== "function" &&
      typeof (runnable as { run?: unknown })?.run !== "function"
    ) {
      throw new GraphValidationError(
        "GRAPH_003",
        `Node '${name}' must be a function, an object with run(), or a compiled graph`,
      );
    }
    this.#nodes.set(name, runnable);
    if (options.ends) this.#ends.set(name, [...options.ends]);
    return this as StateGraph<S, N | K>;
  }

  /**
   * After `from`, always go to `to` (a node or `END`). Several edges out of one node fan out:
   * their targets run in parallel in the next step. With a list of sources (`addEdge([a, b],
   * c)`), `to` is a join: it runs once every source has finished since it last ran.
   */
  addEdge(from: KnownNode<N> | typeof START | readonly KnownNode<N>[], to: EdgeTarget<N>): this {
    if (from === START) return this.#setEntry(to, "addEdge(START, …)");
    if (typeof from === "string") return this.#addEdge(from, { kind: "direct", to });
    const sources = [...new Set(from as readonly string[])];
    if (sources.length === 0 || this.#joins.has(to)) {
      throw new GraphValidationError(
        "GRAPH_007",
        sources.length === 0
          ? `addEdge([], '${to}'): a join needs at least one source`
          : `'${to}' is already the target of a join: list all its sources in one addEdge([...], '${to}')`,
      );
    }
    this.#joins.set(to, sources);
    for (const source of sources) this.#addEdge(source, { kind: "join", to });
    return this;
  }

  /**
   * After `from`, go where `router` says. With a path map, the router returns one of its keys
   * (record form) or one of its values (array form); compile() checks every destination. A
   * router's literal results (or the path map's nodes) must be nodes added before, or `END`.
   * A router may also return `Send`s, or a list of choices: all of them run in the next step.
   */
  addConditionalEdges<T extends string, const P extends PathMap = never>(
    from: CheckedSource<N, T, P>,
    router: (state: S) => RouterChoice<T> | Promise<RouterChoice<T>>,
    pathMap?: P,
  ): this {
    return this.#addEdge(from, {
      kind: "conditional",
      router: router as Router<S>,
      pathMap: normalizePathMap(pathMap),
    });
  }

  setEntryPoint(name: KnownNode<N>): this {
    this.#entryPoint = name;
    return this;
  }

  /**
   * Adds `nodes` in order, each with an edge to the next (LangGraph.js's `addSequence`): a list
   * of `[name, node]` pairs, or an object of nodes by name. Edges into the first and out of
   * the last are yours to add.
   */
  addSequence<const K extends string>(
    nodes:
      readonly (readonly [K, NodeLike<S> | AnyCompiledGraph])[] | Readonly<Record<K, NodeLike<S>>>,
  ): StateGraph<S, N | K> {
    const pairs = (Array.isArray(nodes) ? nodes : Object.entries(nodes)) as [K, NodeLike<S>][];
    if (pairs.length === 0) {
      throw new GraphValidationError("GRAPH_003", "addSequence needs at least one node");
    }
    let previous: string | null = null;
    for (const [name, node] of pairs) {
      this.addNode(name, node);
      if (previous !== null) this.#addEdge(previous, { kind: "direct", to: name });
      previous = name;
    }
    return this as StateGraph<S, N | K>;
  }

  /**
   * One entry point per graph: a `START` edge to another node than the entry point already set
   * is `GRAPH_002` (LangGraph.js would start both; here fan out from one node instead).
   */
  #setEntry(name: string, how: string): this {
    if (this.#entryPoint !== null && this.#entryPoint !== name) {
      throw new GraphValidationError(
        "GRAPH_002",
        `${how}: the graph already starts at '${this.#entryPoint}'; a graph has one entry point ` +
          `(to start several nodes at once, fan out from one node)`,
      );
    }
    this.#entryPoint = name;
    return this;
  }

  /**
   * Validates the graph (coded `GraphValidationError`s) and returns the runnable app. An option
   * it does not know is `OPTION_001`.
   */
  compile(options: CompileOptions = {}): CompiledGraph<S> {
    requireCompileOptions(options);
    const shape = {
      nodes: this.#nodes,
      edges: this.#edges,
      joins: this.#joins,
      ends: this.#ends,
      entryPoint: this.#entryPoint,
    };
    validateGraph(shape);
    const frozen = {
      nodes: new Map(this.#nodes),
      edges: new Map([...this.#edges].map(([from, edges]) => [from, [...edges]])),
      joins: new Map(this.#joins),
      ends: new Map(this.#ends),
      entryPoint: this.#entryPoint!,
    };
    return new CompiledGraph<S>(
      {
        ...frozen,
        reducers: { ...this.#options.reducers } as Reducers<S>,
        initialState: { ...this.#options.initialState },
        schema: this.#schema,
        // Once per compile: every checkpoint the graph writes records this value as it is.
        version: graphVersion(frozen, requireVersionName(options.version)),
        migrations: compileMigrations(options.migrations, frozen.nodes),
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

/**
 * A graph being built: state `S`, and `N`, the names of the nodes added so far (so an edge to
 * a node never added fails type-checking).
 */
export type StateGraph<
  S extends BaseState = DefaultState,
  N extends string = never,
> = StateGraphBuilder<S, N>;

/** `new StateGraph(...)`: from a zod state schema, from options, or from nothing. */
export interface StateGraphConstructor {
  /** State typed and checked by a zod object schema (fields besides `messages`). */
  new <T extends StateSchema>(
    schema: T,
    options?: StateOptions<StateOf<T>>,
  ): StateGraph<StateOf<T>>;
  /** State typed by `S` (default: any fields), not checked at run time. */
  new <S extends BaseState = DefaultState>(options?: StateOptions<S>): StateGraph<S>;
  readonly prototype: StateGraph<BaseState, string>;
}

/**
 * Builds a graph of nodes. Each node gets the state and returns an update; edges pick the next
 * node; `compile()` checks the graph and returns the runnable app. Give it a zod object schema
 * and the state's type is inferred for nodes, routers and reducers, and checked at run time
 * (see docs/graphs.md, "Typed state with zod").
 *
 * @example
 * const app = new StateGraph(z.object({ refunds: z.number().default(0) }))
 *   .addNode("MAIN", model)
 *   .addNode("TOOL", new ToolNode([chargeCard]))
 *   .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
 *   .addEdge("TOOL", "MAIN")
 *   .setEntryPoint("MAIN")
 *   .compile({ checkpointer });
 */
export const StateGraph = StateGraphBuilder as StateGraphConstructor;
