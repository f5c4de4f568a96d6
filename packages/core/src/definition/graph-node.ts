import type { Message } from "../messages/message.js";
import type { NodeContext } from "../node/node-context.js";
import type { Command } from "./command.js";
import type { BaseState, StateUpdate } from "./reducers.js";

/**
 * What a node may return: an update, a message or messages to append, nothing, or a `Command`
 * carrying one of those as its `update` with where to go next.
 */
export type NodeOutput<S extends BaseState> =
  StateUpdate<S> | Message | Message[] | void | Command<StateUpdate<S> | Message | Message[]>;

/**
 * A node as a function. `state` is the node's own copy: the update it returns (and any change
 * it made to the copy) is kept only if the node completes, so a node that fails, times out, is
 * stopped or pauses leaves the thread as it was. Prefer returning an update.
 */
export type NodeFunction<S extends BaseState> = (
  state: S,
  ctx: NodeContext,
) => NodeOutput<S> | Promise<NodeOutput<S>>;

/** A node as an object, such as `ToolNode` or a model `Agent`. */
export interface GraphNode<S extends BaseState> {
  run(state: S, ctx: NodeContext): Promise<NodeOutput<S>>;
  /**
   * The ledger calls this node will make from `state` whose claims may be written ahead, in
   * the write of the step that leads here (ledger protocol v2): `ToolNode` names its calls
   * whose tool's in-doubt policy is `retry`, for which a claim made ahead and a claim made when
   * the tool starts lead to the same action after a crash.
   */
  claimsAhead?(state: S): readonly CallToClaim[];
  /**
   * The tools this node runs calls of (a `ToolNode`'s): their names and argument schemas are
   * part of the graph's version, and a thread whose calls wait for this node continues under
   * another version only while their tools are here and their arguments still parse.
   */
  readonly tools?: readonly NodeTool[];
  /**
   * What else of this node is part of the graph's version besides its name and tools, as plain
   * JSON (a subgraph: its child graph's version). Read once, by `compile()`.
   */
  versionShape?(): VersionShape;
}

/** A node's tool as the graph's version and a migration's checks see it. */
export interface NodeTool {
  readonly name: string;
  readonly schema: { safeParse(value: unknown): { success: boolean } };
  /** The arguments' JSON Schema. */
  jsonSchema(): Record<string, unknown>;
}

/**
 * A node's part of the graph's version: `subgraph` is the child graph's fingerprint (a thread
 * standing at a subgraph node has a child thread named by the node, which a rename would lose).
 */
export interface VersionShape {
  subgraph?: string;
}

/** A ledger call a node will make: its key and tool. */
export interface CallToClaim {
  key: string;
  toolName: string;
}

/** What `addNode` takes: a function or an object with `run`. */
export type NodeLike<S extends BaseState> = NodeFunction<S> | GraphNode<S>;

/** True for the object form of a node. */
export function isGraphNode<S extends BaseState>(node: NodeLike<S>): node is GraphNode<S> {
  return typeof node === "object" && node !== null && typeof node.run === "function";
}
