import {
  LANGGRAPH_OPTION_HINTS,
  requireKnownOptions,
  type CompileOptions,
  type OptionHints,
} from "@tenxgraph/core";
import type { AgentOptions } from "./agent-options.js";

/** Every key of {@link AgentOptions}: the compiler checks the list against the interface. */
const AGENT_OPTION_KEYS = {
  model: true,
  systemPrompt: true,
  tools: true,
  toolNode: true,
  temperature: true,
  maxTokens: true,
  requestTimeout: true,
  retry: true,
  provider: true,
  providerOptions: true,
  prepareMessages: true,
} satisfies Record<keyof AgentOptions, true>;

/** `compile()`'s options, which a builder takes as `compile: { … }` (and `checkpointer`). */
const COMPILE_OPTION_KEYS = {
  checkpointer: true,
  logger: true,
  meter: true,
  ids: true,
  faultPoints: true,
  stopPollIntervalMs: true,
  claimStaleAfterMs: true,
} satisfies Record<keyof CompileOptions, true>;

/** What to use instead of LangGraph.js's agent options (`createReactAgent`, `createSupervisor`). */
const AGENT_HINTS: OptionHints = {
  ...LANGGRAPH_OPTION_HINTS,
  prompt:
    "Use 'systemPrompt' for a system prompt, or 'prepareMessages' for a function that chooses the messages sent",
  stateModifier: "Use 'systemPrompt', or 'prepareMessages' for a function of the messages",
  messageModifier: "Use 'systemPrompt', or 'prepareMessages' for a function of the messages",
  preModelHook: "Use 'prepareMessages'",
  postModelHook: "Not supported yet: route on the reply with a StateGraph of your own",
  llm: "Use 'model'",
  responseFormat:
    "Structured output is not supported yet: ask for JSON in 'systemPrompt', or give the model a tool whose arguments are the answer",
  stateSchema:
    "Not supported: build a StateGraph with an Agent node and a ToolNode for a state of your own",
  interruptBefore:
    "Not supported yet: call interrupt() in a tool to pause before its effect instead",
  interruptAfter: "Not supported yet: call interrupt() in a tool instead",
};

/**
 * The options of an agent builder: the `Agent`'s but `omit`, then `extra`. Hints point
 * `compile()`'s options passed at the top level to `compile: { … }`.
 */
export function builderOptions(
  omit: readonly (keyof AgentOptions)[],
  extra: readonly string[],
): { known: ReadonlySet<string>; hints: OptionHints } {
  const known = new Set(Object.keys(AGENT_OPTION_KEYS));
  for (const key of omit) known.delete(key);
  for (const key of extra) known.add(key);
  const hints: Record<string, string> = { ...AGENT_HINTS };
  for (const key of Object.keys(COMPILE_OPTION_KEYS)) {
    if (!known.has(key))
      hints[key] = `'${key}' is an option of compile(): pass compile: { ${key} }`;
  }
  return { known, hints };
}

const AGENT = builderOptions([], []);

/** Refuses an option `new Agent()` does not know (`OPTION_001`). */
export function requireAgentOptions(options: object): void {
  requireKnownOptions("new Agent()", options, AGENT.known, {
    ...AGENT.hints,
    checkpointer: "An Agent is a node: give the checkpointer to the graph's compile()",
  });
}
