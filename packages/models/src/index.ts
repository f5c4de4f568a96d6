/**
 * Model nodes for tenxgraph: an `Agent` on any Vercel AI SDK provider, a ready ReAct graph,
 * and the tools of MCP servers as ledgered tenxgraph tools.
 * @module
 */
export { Agent } from "./agent/agent.js";
export { DEFAULT_REQUEST_TIMEOUT_SECONDS } from "./agent/agent-options.js";
export type { AgentOptions, PrepareMessages } from "./agent/agent-options.js";
export type { ResponseFormat } from "./agent/response-format.js";
export type { PreModelHook, PreModelHookResult, Prompt } from "./agent/prompt-options.js";
export { DEFAULT_RETRY } from "./agent/retry.js";
export type { RetryOptions } from "./agent/retry.js";
export type { ProviderOptions } from "./agent/stream-reply.js";
export { MODEL_PROVIDERS, resolveModel } from "./providers/resolve-model.js";
export type {
  LanguageModelObject,
  ModelSpec,
  ProviderSettings,
} from "./providers/resolve-model.js";
export { REACT_AGENT_NODES, createReactAgent } from "./react/create-react-agent.js";
export type { CreateReactAgentOptions, ReactAgentState } from "./react/create-react-agent.js";
export { SUPERVISOR_NODES, createSupervisor } from "./supervisor/create-supervisor.js";
export type { CreateSupervisorOptions, SupervisedAgent } from "./supervisor/create-supervisor.js";
export { SWARM_NODES, createSwarm } from "./swarm/create-swarm.js";
export type { CreateSwarmOptions, SwarmAgent, SwarmState } from "./swarm/create-swarm.js";
export { createHandoffTool } from "./swarm/handoff-tool.js";
export type { CreateHandoffToolOptions } from "./swarm/handoff-tool.js";
export { MCP_IDEMPOTENCY_KEY_META, mcpTools } from "./mcp/mcp-tools.js";
export type { McpInDoubtPolicy, McpToolsOptions } from "./mcp/mcp-tools.js";
export type {
  McpCallResult,
  McpClient,
  McpContent,
  McpRequestOptions,
  McpToolInfo,
} from "./mcp/mcp-client.js";
