import {
  END,
  StateGraph,
  requireKnownOptions,
  ToolNode,
  type AnyTool,
  type BaseState,
  type CompiledGraph,
  type CompileOptions,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { Agent } from "../agent/agent.js";
import { builderOptions, type AgentOptions } from "../agent/agent-options.js";
import type { ResponseFormat } from "../agent/response-format.js";
import { withAgentName } from "../swarm/agent-name.js";

/** The state of the graph {@link createReactAgent} builds. */
export interface ReactAgentState<T = unknown> extends BaseState {
  /** With `responseFormat`: the structured response to the last answer. */
  structuredResponse?: T;
}

/** What {@link createReactAgent} is built from: the `Agent`'s options, the tools, and storage. */
export interface CreateReactAgentOptions<T = unknown> extends Omit<
  AgentOptions,
  "tools" | "toolNode" | "responseFormat"
> {
  /** See {@link AgentOptions.responseFormat}: sets `structuredResponse` after the final answer. */
  responseFormat?: ResponseFormat<T>;
  /** The tools the model may call; they run in a `ToolNode`, through the tool ledger. */
  tools: readonly AnyTool[];
  /** Where threads and the ledger live (default: a new `InMemoryCheckpointer`). */
  checkpointer?: Checkpointer;
  /** The other options of `compile()`: logger, meter, fault points, timings. */
  compile?: Omit<CompileOptions, "checkpointer">;
  /** The agent's name, which names its node in `createSwarm` (LangGraph.js's `name`). */
  name?: string;
}

const REACT_OPTIONS = builderOptions(["toolNode"], ["checkpointer", "compile", "name"]);

/** The node names of the graph {@link createReactAgent} builds. */
export const REACT_AGENT_NODES = Object.freeze({ model: "MAIN", tools: "TOOL" });

/**
 * The model–tools loop as a compiled graph, the shape of the README's support agent: `MAIN` (an
 * {@link Agent}) replies; when the reply asks for tools, `TOOL` (a `ToolNode`) runs them and
 * the loop goes back to `MAIN`; a reply without tool calls ends the run (with `responseFormat`,
 * after `MAIN` also stored the structured response as `structuredResponse`).
 *
 * @example
 * const app = createReactAgent({
 *   model: "openai/gpt-4o-mini",
 *   tools: [lookupOrder, chargeCard, sendReceipt],
 *   systemPrompt: "You are a support agent.",
 *   checkpointer: new SqliteCheckpointer({ path: "./.tenxgraph/threads.db" }),
 * });
 * await app.invoke({ messages: [Message.user("charge order 4821")] }, { threadId: "order-4821" });
 */
export function createReactAgent<T = unknown>(
  options: CreateReactAgentOptions<T>,
): CompiledGraph<ReactAgentState<T>> {
  if (typeof options === "object" && options !== null) {
    requireKnownOptions("createReactAgent()", options, REACT_OPTIONS.known, REACT_OPTIONS.hints);
  }
  const { tools, checkpointer, compile, name, ...agentOptions } = options;
  if (!Array.isArray(tools)) {
    throw new TypeError("createReactAgent: tools must be an array of tools (it may be empty)");
  }
  const toolNode = new ToolNode(tools);
  const { model: MAIN, tools: TOOL } = REACT_AGENT_NODES;
  const graph = new StateGraph<ReactAgentState<T>>()
    .addNode(MAIN, new Agent<ReactAgentState<T>>({ ...agentOptions, toolNode }))
    .addNode(TOOL, toolNode)
    .addConditionalEdges(MAIN, (state) => (state.messages.at(-1)?.toolCalls?.length ? TOOL : END))
    .addEdge(TOOL, MAIN)
    .setEntryPoint(MAIN)
    .compile({ ...compile, ...(checkpointer && { checkpointer }) });
  return withAgentName(graph, name);
}
