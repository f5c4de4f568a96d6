import {
  END,
  StateGraph,
  ToolNode,
  requireKnownOptions,
  tool,
  type AnyCompiledGraph,
  type AnyTool,
  type BaseState,
  type CompiledGraph,
  type CompileOptions,
  type NodeLike,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { z } from "zod";
import { Agent } from "../agent/agent.js";
import { builderOptions, type AgentOptions } from "../agent/agent-options.js";
import type { ModelSpec } from "../providers/resolve-model.js";

/** A worker the supervisor may hand the conversation to. */
export interface SupervisedAgent {
  /** Its node name, and its handoff tool's: `transfer_to_<name>`. Letters, digits, `_`, `-`. */
  name: string;
  /** What it is good at, for the supervisor model (the handoff tool's description). */
  description: string;
  /** The worker: a compiled graph over the transcript (a `createReactAgent`, say), run as a subgraph. */
  graph: AnyCompiledGraph;
}

/** What {@link createSupervisor} is built from. */
export interface CreateSupervisorOptions extends Omit<
  AgentOptions,
  "tools" | "toolNode" | "model"
> {
  /**
   * The supervisor's model, as `Agent` takes it; or a node of your own that replies with
   * `transfer_to_<name>` tool calls (a `ScriptedModel` in tests and examples).
   */
  model: ModelSpec | NodeLike<BaseState>;
  agents: readonly SupervisedAgent[];
  /** Where threads and the ledger live (default: a new `InMemoryCheckpointer`). */
  checkpointer?: Checkpointer;
  /** The other options of `compile()`: logger, meter, fault points, timings. */
  compile?: Omit<CompileOptions, "checkpointer">;
}

/** The node names of the graph {@link createSupervisor} builds, besides one per worker. */
export const SUPERVISOR_NODES = Object.freeze({ supervisor: "SUPERVISOR", handoff: "HANDOFF" });

const HANDOFF_PREFIX = "transfer_to_";

const SUPERVISOR_OPTIONS = builderOptions(
  ["tools", "toolNode"],
  ["agents", "checkpointer", "compile"],
);

/**
 * A supervisor model routing to worker agents (LangGraph.js's `createSupervisor`): the
 * supervisor replies, or calls `transfer_to_<name>` tools; `HANDOFF` answers those calls
 * (through the ledger, like any tool) and runs the workers named, several at once when it
 * named several, each as a subgraph on the shared transcript; their replies go back to the
 * supervisor, and its reply without tool calls ends the run. An interrupt inside a worker
 * pauses the whole graph and is answered through it (`<worker>|<interrupt id>`).
 *
 * @example
 * const app = createSupervisor({
 *   model: "openai/gpt-4o-mini",
 *   systemPrompt: "Route billing questions to billing, the rest to support.",
 *   agents: [
 *     { name: "billing", description: "Refunds and charges", graph: billingAgent },
 *     { name: "support", description: "Everything else", graph: supportAgent },
 *   ],
 * });
 */
export function createSupervisor(options: CreateSupervisorOptions): CompiledGraph<BaseState> {
  if (typeof options === "object" && options !== null) {
    requireKnownOptions(
      "createSupervisor()",
      options,
      SUPERVISOR_OPTIONS.known,
      SUPERVISOR_OPTIONS.hints,
    );
  }
  const { model, agents, checkpointer, compile, ...agentOptions } = options;
  const { supervisor: SUPERVISOR, handoff: HANDOFF } = SUPERVISOR_NODES;
  requireAgents(agents, [SUPERVISOR, HANDOFF]);
  const handoffs = new ToolNode(agents.map(handoffTool));
  const supervisor = isNode(model)
    ? model
    : new Agent({ ...agentOptions, model, toolNode: handoffs });
  const names = agents.map((agent) => agent.name);
  let graph = new StateGraph<BaseState>()
    .addNode(SUPERVISOR, supervisor)
    .addNode(HANDOFF, handoffs)
    .addConditionalEdges(
      SUPERVISOR,
      (state) => (state.messages.at(-1)?.toolCalls?.length ? HANDOFF : END),
      [HANDOFF, END],
    )
    .addConditionalEdges(HANDOFF, handedTo, [...names, SUPERVISOR]);
  for (const agent of agents) {
    graph = graph.addNode(agent.name, agent.graph).addEdge(agent.name, SUPERVISOR);
  }
  return graph
    .setEntryPoint(SUPERVISOR)
    .compile({ ...compile, ...(checkpointer && { checkpointer }) });
}

function handoffTool(agent: SupervisedAgent): AnyTool {
  return tool({
    name: `${HANDOFF_PREFIX}${agent.name}`,
    description: `Hand the conversation to ${agent.name}: ${agent.description}`,
    schema: z.object({}),
    execute: () => `Transferred to ${agent.name}`,
  }) as unknown as AnyTool;
}

/**
 * The workers the supervisor's last reply handed to, in its call order (several run in
 * parallel); back to the supervisor when it handed to none.
 */
function handedTo(state: BaseState): string[] {
  const reply = state.messages.findLast((message) => message.role === "assistant");
  const workers = (reply?.toolCalls ?? [])
    .map((call) => call.name)
    .filter((name) => name.startsWith(HANDOFF_PREFIX))
    .map((name) => name.slice(HANDOFF_PREFIX.length));
  return workers.length > 0 ? [...new Set(workers)] : [SUPERVISOR_NODES.supervisor];
}

function isNode(model: CreateSupervisorOptions["model"]): model is NodeLike<BaseState> {
  return typeof model === "function" || typeof (model as { run?: unknown }).run === "function";
}

function requireAgents(agents: readonly SupervisedAgent[], reserved: string[]): void {
  if (!Array.isArray(agents) || agents.length === 0) {
    throw new TypeError("createSupervisor: agents must list at least one worker");
  }
  const seen = new Set<string>(reserved);
  for (const { name } of agents) {
    if (typeof name !== "string" || !/^[A-Za-z0-9_-]{1,50}$/.test(name) || seen.has(name)) {
      throw new TypeError(
        `createSupervisor: agent name '${name}' must be letters, digits, '_' or '-' (at most 50), ` +
          `unique, and not ${reserved.join(" or ")}`,
      );
    }
    seen.add(name);
  }
}
