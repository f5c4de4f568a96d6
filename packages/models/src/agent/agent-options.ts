import {
  LANGGRAPH_OPTION_HINTS,
  requireKnownOptions,
  type AnyTool,
  type BaseState,
  type CompileOptions,
  type OptionHints,
  type ToolNode,
} from "@tenxgraph/core";
import {
  checkModelSpec,
  modelLabel,
  type ModelSpec,
  type ProviderSettings,
} from "../providers/resolve-model.js";
import { resolveRetry, type RetryOptions } from "./retry.js";
import type { AgentTracing } from "./chat-span.js";
import type { ProviderOptions } from "./stream-reply.js";
import {
  resolveResponseFormat,
  type ResolvedResponseFormat,
  type ResponseFormat,
} from "./response-format.js";
import {
  resolvePrompt,
  type PrepareMessages,
  type PreModelHook,
  type Prompt,
} from "./prompt-options.js";

export type { PrepareMessages };

/** What an {@link Agent} is built from. */
export interface AgentOptions<S extends BaseState = BaseState> {
  /**
   * The model: `"openai/gpt-4o-mini"`, `"anthropic/claude-sonnet-4-5"`, `"google/gemini-2.5-flash"`,
   * `"openai-compatible/<model>"` (with `provider.baseURL`), or any AI SDK model object.
   */
  model: ModelSpec;
  /** Sent as the system prompt before the transcript. */
  systemPrompt?: string;
  /** The tools the model may call (their zod schemas are sent as JSON Schema). */
  tools?: readonly AnyTool[];
  /** Or: the `ToolNode` that runs the calls; its tools are sent. */
  toolNode?: ToolNode;
  temperature?: number;
  /** Most tokens the model may generate per reply. */
  maxTokens?: number;
  /**
   * Seconds one request may take, streaming included (default 600). `null`, 0 or a negative
   * number disables it. A request past it fails with `MODEL_002` and is not retried: the node's
   * own deadline (default 900 s) sits above it, so a slow model fails with its own error.
   */
  requestTimeout?: number | null;
  /** Retries of transient failures (429, 5xx, network); see {@link RetryOptions}. */
  retry?: Partial<RetryOptions>;
  /** Base URL, API key and headers for a model given as a string. */
  provider?: ProviderSettings;
  /** Provider-specific request options, passed through (`{ openai: { user: "u-1" } }`). */
  providerOptions?: ProviderOptions;
  /**
   * Chooses what the model is sent, once per node run (not again on a retry): gets a copy of
   * the transcript and the state (read it, don't change it), returns the messages to send, e.g.
   * a bounded window of a long thread with `trimMessages` from `@tenxgraph/core`, or a summary
   * and the latest turns. Only the request changes: the thread keeps its whole transcript, and
   * the reply is appended to it as usual. `systemPrompt` is sent apart from these messages. It
   * must return a non-empty array of messages; anything else fails the node with a
   * `TypeError` naming `prepareMessages`.
   *
   * @example
   * new Agent({
   *   model: "openai/gpt-4o-mini",
   *   prepareMessages: (messages) => trimMessages(messages, { maxTokens: 8000 }),
   * });
   */
  prepareMessages?: PrepareMessages<S>;
  /**
   * A `chat <model>` span per model step: the tracer (default: the global one named
   * `10xgraph`) and whether the messages and the reply are recorded (off by default).
   */
  tracing?: AgentTracing;
  /**
   * LangGraph.js's name for the same two things, so its code ports as is: a string or a
   * `Message.system(...)` is `systemPrompt`; a function `(state) => messages` (the whole
   * request, system messages included) is a `prepareMessages` that reads only the state.
   * Give one of `prompt`, `systemPrompt` or `prepareMessages` per kind, not both.
   */
  prompt?: Prompt<S>;
  /**
   * LangGraph.js's pre-model hook, as a `prepareMessages`: `(state) => ({ llmInputMessages })`
   * chooses what the model is sent, and only that. Returning `messages` (which in LangGraph.js
   * rewrites the transcript) is a `TypeError`: edit the transcript in a node of your own, with
   * `Message.remove` or a message of the same id.
   */
  preModelHook?: PreModelHook<S>;
  /**
   * Asks for a structured response after the final answer (a reply without tool calls): one
   * more request, with the transcript, the answer and the schema (the provider's JSON mode),
   * whose result, checked by the schema, goes to the state's `structuredResponse` with the
   * answer. A reply the schema refuses fails the node with `MODEL_006`. With a zod state
   * schema, declare `structuredResponse` in it.
   */
  responseFormat?: ResponseFormat;
}

/** The default `requestTimeout`, in seconds. */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 600;

// Node's timers overflow past 2^31 - 1 ms (about 24.8 days); a longer timeout is as good as none.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Checked, defaulted and frozen options. */
export interface ResolvedAgentOptions<S extends BaseState = BaseState> {
  readonly model: ModelSpec;
  readonly label: string;
  readonly systemPrompt: string | undefined;
  readonly tools: readonly AnyTool[];
  /** The ToolNode given: its tools are read at each request (remote ones come and go). */
  readonly toolNode: ToolNode | undefined;
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  readonly requestTimeoutMs: number | null;
  readonly retry: Readonly<RetryOptions>;
  readonly provider: Readonly<ProviderSettings>;
  readonly providerOptions: ProviderOptions | undefined;
  readonly prepareMessages: PrepareMessages<S> | undefined;
  readonly tracing: Readonly<AgentTracing>;
  readonly responseFormat: ResolvedResponseFormat | undefined;
}

/**
 * Checks the options once, at construction, so a mistake surfaces where the graph is built
 * rather than at its first run: `TypeError` for a malformed option, `ModelError` (`MODEL_003`)
 * for a model string that cannot work, `UnknownOptionError` (`OPTION_001`) for an option it
 * does not know (`stateModifier`, `llm`).
 */
export function resolveAgentOptions<S extends BaseState = BaseState>(
  options: AgentOptions<S>,
): ResolvedAgentOptions<S> {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Agent: options must be an object, e.g. { model: 'openai/gpt-4o-mini' }");
  }
  requireAgentOptions(options);
  const provider = Object.freeze({ ...options.provider });
  checkModel(options.model, provider);
  const problem = (what: string) => new TypeError(`Agent: ${what}`);
  const { systemPrompt, prepareMessages } = resolvePrompt(options);
  if (systemPrompt !== undefined && typeof systemPrompt !== "string") {
    throw problem("systemPrompt must be a string");
  }
  const { temperature, maxTokens } = options;
  if (temperature !== undefined && !(typeof temperature === "number" && temperature >= 0)) {
    throw problem(`temperature must be a number >= 0, got ${String(temperature)}`);
  }
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens > 0)) {
    throw problem(`maxTokens must be a positive integer, got ${String(maxTokens)}`);
  }
  if (prepareMessages !== undefined && typeof prepareMessages !== "function") {
    throw problem("prepareMessages must be a function (messages, state) => messages");
  }
  return Object.freeze({
    model: options.model,
    label: modelLabel(options.model),
    systemPrompt,
    tools: Object.freeze(toolsOf(options)),
    toolNode: options.toolNode,
    temperature,
    maxTokens,
    requestTimeoutMs: timeoutMs(options.requestTimeout),
    retry: resolveRetry(options.retry),
    provider,
    providerOptions: options.providerOptions,
    prepareMessages,
    tracing: Object.freeze({ ...options.tracing }),
    responseFormat: resolveResponseFormat(options.responseFormat),
  });
}

function checkModel(model: unknown, provider: ProviderSettings): void {
  if (typeof model === "string") {
    checkModelSpec(model, provider);
    return;
  }
  const isModel =
    typeof model === "object" &&
    model !== null &&
    typeof (model as { doStream?: unknown }).doStream === "function";
  if (!isModel) {
    throw new TypeError(
      "Agent: model must be a string like 'openai/gpt-4o-mini' or an AI SDK language model",
    );
  }
}

function toolsOf(options: Pick<AgentOptions, "tools" | "toolNode">): AnyTool[] {
  if (options.tools !== undefined && options.toolNode !== undefined) {
    throw new TypeError("Agent: pass tools or toolNode, not both");
  }
  const tools = options.toolNode ? options.toolNode.tools : [...(options.tools ?? [])];
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) throw new TypeError(`Agent: two tools are named '${tool.name}'`);
    seen.add(tool.name);
  }
  return tools;
}

function timeoutMs(seconds: number | null | undefined): number | null {
  if (seconds === undefined) return DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000;
  if (seconds === null) return null;
  if (typeof seconds !== "number" || Number.isNaN(seconds)) {
    throw new TypeError(`Agent: requestTimeout must be seconds or null, got ${String(seconds)}`);
  }
  if (seconds <= 0 || seconds === Infinity) return null;
  return Math.min(seconds * 1000, MAX_TIMER_MS);
}

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
  tracing: true,
  prompt: true,
  preModelHook: true,
  responseFormat: true,
} satisfies Record<keyof AgentOptions, true>;

/** `compile()`'s options, which a builder takes as `compile: { … }` (and `checkpointer`). */
const COMPILE_OPTION_KEYS = {
  checkpointer: true,
  store: true,
  logger: true,
  meter: true,
  tracing: true,
  ids: true,
  faultPoints: true,
  stopPollIntervalMs: true,
  claimStaleAfterMs: true,
  version: true,
  migrations: true,
  interruptBefore: true,
  interruptAfter: true,
} satisfies Record<keyof CompileOptions, true>;

/** What to use instead of LangGraph.js's agent options (`createReactAgent`, `createSupervisor`). */
const AGENT_HINTS: OptionHints = {
  ...LANGGRAPH_OPTION_HINTS,
  stateModifier: "Use 'systemPrompt', or 'prepareMessages' for a function of the messages",
  messageModifier: "Use 'systemPrompt', or 'prepareMessages' for a function of the messages",
  postModelHook: "Not supported yet: route on the reply with a StateGraph of your own",
  llm: "Use 'model'",
  stateSchema:
    "Not supported: build a StateGraph with an Agent node and a ToolNode for a state of your own",
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
