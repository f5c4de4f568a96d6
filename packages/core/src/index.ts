/**
 * tenxgraph: a graph runtime for AI agents that stays correct when processes die. This entry is
 * the agent author's API. Errors are checked by code (`isTenxgraphError(e, "RECURSION_001")`),
 * so of their classes only the base and `ModelError` (a model node of your own throws it) are
 * exported. A store's contract (the `Checkpointer` type, ledger
 * entries, thread summaries) is in `@tenxgraph/core/storage`, a host's run controls in
 * `@tenxgraph/core/host`, test helpers in `@tenxgraph/core/testing`.
 * @module
 */
export { StateGraph } from "./graph/state-graph.js";
export type { AnyCompiledGraph, DefaultState, NodeOptions } from "./graph/state-graph.js";
export { Command } from "./definition/command.js";
export { Send } from "./definition/send.js";
export { Subgraph } from "./graph/subgraph.js";
export type { SubgraphOptions } from "./graph/subgraph.js";
export type { StateOf, StateSchema } from "./definition/state-schema.js";
export { CompiledGraph } from "./graph/compiled-graph.js";
export type { CompileOptions } from "./graph/compile-options.js";
export type { StateHistoryEntry, ThreadState } from "./graph/thread-state.js";
export type { StateWrite, UpdateStateOptions } from "./runtime/state-edit.js";
export { END } from "./definition/edges.js";
export type { Router } from "./definition/edges.js";
export type { GraphNode, NodeFunction, NodeLike, NodeOutput } from "./definition/graph-node.js";
export { appendMessages } from "./definition/reducers.js";
export type { BaseState, Reducer, Reducers, StateUpdate } from "./definition/reducers.js";

export { Message, REMOVE_ALL_MESSAGES } from "./messages/message.js";
export type {
  AssistantMessage,
  ContentBlock,
  MessageUpdate,
  Role,
  SystemMessage,
  TokenUsage,
  ToolCall,
  ToolMessage,
  UserMessage,
} from "./messages/message.js";
export { trimMessages } from "./messages/trim-messages.js";
export type { TrimMessagesOptions } from "./messages/trim-messages.js";

export { tool } from "./tools/tool.js";
export type { AnyTool, InDoubtPolicy, Tool, ToolDefinition, ToolOutput } from "./tools/tool.js";
export type { ToolContext, ToolStateUpdate } from "./tools/tool-context.js";
export { ToolNode } from "./tools/tool-node.js";
export { remoteTool } from "./tools/remote-tool.js";
export type { RemoteToolSpec } from "./node/remote-tool-spec.js";

export { IN_DOUBT_INTERRUPT_KIND } from "./node/in-doubt-decision.js";
export type { InDoubtDecision } from "./node/in-doubt-decision.js";

export { interrupt } from "./node/interrupt.js";
export type { Interrupt } from "./storage/checkpointer.js";
export type { RunConfig } from "./runtime/run-config.js";
export type { ResumeInput, RunInput, RunResult } from "./runtime/run-result.js";
export type { NodeContext } from "./node/node-context.js";

export { InMemoryCheckpointer } from "./storage/in-memory-checkpointer.js";
export type { InMemoryCheckpointerOptions } from "./storage/in-memory-checkpointer.js";

export { TenxgraphError, isTenxgraphError } from "./errors/tenxgraph-error.js";
export { ModelError } from "./errors/errors.js";
export { ERROR_CODES } from "./errors/codes.js";
// For a node factory of your own that refuses unknown options, as @tenxgraph/models does.
export { requireKnownOptions, LANGGRAPH_OPTION_HINTS } from "./errors/unknown-option.js";
export type { OptionHints } from "./errors/unknown-option.js";
export type { ErrorCode } from "./errors/codes.js";

export type { RunStatus, StreamEvent } from "./events/stream-event.js";
export type {
  MessagesChunk,
  StreamConfig,
  StreamMode,
  StreamOutput,
} from "./runtime/stream-mode.js";
export { jsonLogger, silentLogger } from "./events/logger.js";
export type { Logger } from "./events/logger.js";
export { METER_NAME } from "./events/metrics.js";
