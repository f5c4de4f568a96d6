import {
  StateGraph,
  requireKnownOptions,
  type AnyCompiledGraph,
  type BaseState,
} from "@tenxgraph/core";
import { agentNameOf } from "./agent-name.js";

/** The state of a swarm: the shared transcript, and the agent the next turn goes to. */
export interface SwarmState extends BaseState {
  /** The agent that last took the conversation (set by its handoff tool), else the default. */
  activeAgent: string;
}

/** An agent of the swarm: a compiled graph (a `createReactAgent`) and its node name. */
export interface SwarmAgent {
  name: string;
  graph: AnyCompiledGraph;
}

/** What {@link createSwarm} is built from (LangGraph.js's names). */
export interface CreateSwarmOptions {
  /**
   * The agents: each a `createReactAgent({ name, … })`, or `{ name, graph }`. Each runs as a
   * subgraph on the shared transcript and hands off with `createHandoffTool({ agentName })`.
   */
  agents: readonly (AnyCompiledGraph | SwarmAgent)[];
  /** The agent a thread's first turn goes to. */
  defaultActiveAgent: string;
}

/** The node names of the graph {@link createSwarm} builds, besides one per agent. */
export const SWARM_NODES = Object.freeze({ router: "ACTIVE_AGENT" });

const SWARM_OPTIONS = new Set(["agents", "defaultActiveAgent"]);

/**
 * Agents that hand the conversation to each other (LangGraph.js's `createSwarm`): each turn
 * goes to the active agent (`activeAgent`, first `defaultActiveAgent`); an agent's handoff
 * tool (`Command.PARENT`) ends its subgraph and the swarm goes on with the agent named, which
 * stays active for the next turn; an answer without a handoff ends the turn. Returns the
 * graph to `compile({ checkpointer })`. A handoff is recorded in the last step of the agent's
 * child thread: a crash between it and the swarm's step replays the handoff, not the agent.
 *
 * @example
 * const workflow = createSwarm({ agents: [alice, bob], defaultActiveAgent: "Alice" });
 * const app = workflow.compile({ checkpointer });
 */
export function createSwarm(options: CreateSwarmOptions): StateGraph<SwarmState> {
  if (typeof options === "object" && options !== null) {
    requireKnownOptions("createSwarm()", options, SWARM_OPTIONS, {});
  }
  const { agents, defaultActiveAgent } = options;
  const named = namedAgents(agents);
  const names = named.map((agent) => agent.name);
  if (!names.includes(defaultActiveAgent)) {
    throw new TypeError(
      `createSwarm: defaultActiveAgent '${String(defaultActiveAgent)}' is not one of the agents (${names.join(", ")})`,
    );
  }
  const { router: ROUTER } = SWARM_NODES;
  let graph = new StateGraph<SwarmState>({ initialState: { activeAgent: defaultActiveAgent } })
    // Each turn starts at the agent that last took the conversation.
    .addNode(ROUTER, () => undefined)
    .addConditionalEdges(ROUTER, (state) => state.activeAgent, names);
  for (const agent of named) {
    const others = names.filter((name) => name !== agent.name);
    graph = graph.addNode(agent.name, agent.graph, { ends: others });
  }
  return graph.setEntryPoint(ROUTER);
}

function namedAgents(agents: CreateSwarmOptions["agents"]): SwarmAgent[] {
  if (!Array.isArray(agents) || agents.length === 0) {
    throw new TypeError("createSwarm: agents must list at least one agent");
  }
  const seen = new Set<string>([SWARM_NODES.router]);
  return agents.map((entry: AnyCompiledGraph | SwarmAgent) => {
    const agent = "graph" in entry && "name" in entry ? entry : namedGraph(entry);
    if (!/^[A-Za-z0-9_ -]{1,50}$/.test(agent.name) || seen.has(agent.name)) {
      throw new TypeError(
        `createSwarm: agent name '${agent.name}' must be letters, digits, spaces, '_' or '-' ` +
          `(at most 50), unique, and not ${SWARM_NODES.router}`,
      );
    }
    seen.add(agent.name);
    return agent;
  });
}

function namedGraph(graph: AnyCompiledGraph): SwarmAgent {
  const name = agentNameOf(graph);
  if (name === undefined) {
    throw new TypeError(
      "createSwarm: an agent has no name: build it with createReactAgent({ name, … }) or pass { name, graph }",
    );
  }
  return { name, graph };
}
