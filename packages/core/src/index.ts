/**
 * tenxgraph: a graph runtime for AI agents that stays correct when processes die. This entry is
 * the application's API; a store's contract is in `@tenxgraph/core/storage`, test helpers
 * (conformance suite, scripted model, fault points) in `@tenxgraph/core/testing`.
 * @module
 */
export { StateGraph } from "./graph/state-graph.js";
export type {
  AnyCompiledGraph,
  DefaultState,
  EdgeTarget,
  KnownNode,
  NodeOptions,
  PathMap,
  StateGraphConstructor,
  StateOptions,
} from "./graph/state-graph.js";
export { Command } from "./graph/command.js";
export type { CommandOptions, Goto } from "./graph/command.js";
export { Send } from "./graph/send.js";
export { isChildThreadId, Subgraph } from "./graph/subgraph.js";
export type { SubgraphOptions, SubgraphSource } from "./graph/subgraph.js";
export type { StateOf, StateSchema } from "./graph/state-schema.js";
export { CompiledGraph } from "./graph/compiled-graph.js";
export type { CompileOptions } from "./graph/compiled-graph.js";
export type { StateHistoryEntry, ThreadState } from "./graph/thread-state.js";
export type { StateWrite, UpdateStateOptions } from "./runtime/state-edit.js";
export { END } from "./graph/edges.js";
export type { Edge, Router, RouterChoice } from "./graph/edges.js";
export type { GraphDefinition } from "./graph/graph-definition.js";
export type { GraphNode, NodeFunction, NodeLike, NodeOutput } from "./graph/graph-node.js";
export { appendMessages } from "./graph/reducers.js";
export type { BaseState, Reducer, Reducers, StateUpdate } from "./graph/reducers.js";

export { Message, REMOVE_ALL_MESSAGES } from "./messages/message.js";
export type {
  AssistantMessage,
  ContentBlock,
  MessageRemoval,
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
export { uuidv7 } from "./messages/ids.js";
export type { IdGenerator } from "./messages/ids.js";

export { tool } from "./tools/tool.js";
export type { AnyTool, InDoubtPolicy, Tool, ToolDefinition, ToolOutput } from "./tools/tool.js";
export type { ToolContext, ToolStateUpdate } from "./tools/tool-context.js";
export { ToolNode } from "./tools/tool-node.js";
export {
  REMOTE_TOOL_CALL_KIND,
  isRemoteTool,
  isRemoteToolCall,
  remoteTool,
} from "./tools/remote-tool.js";
export type { RemoteToolCall, RemoteToolSpec } from "./tools/remote-tool.js";

export { ledgerKey } from "./ledger/ledger-key.js";
export { decodeEnvelope } from "./ledger/envelope.js";
export type { ResultEnvelope } from "./ledger/envelope.js";
export { IN_DOUBT_INTERRUPT_KIND } from "./runtime/in-doubt-decision.js";
export type { InDoubtDecision } from "./runtime/in-doubt-decision.js";
export type {
  CompletedLedgerEntry,
  InterruptedLedgerEntry,
  LedgerEntry,
  LedgerStatus,
  StartedLedgerEntry,
} from "./storage/ledger-entry.js";

export { interrupt } from "./runtime/interrupt.js";
export type { Interrupt } from "./storage/checkpointer.js";
export {
  DEFAULT_NODE_TIMEOUT_SECONDS,
  DEFAULT_RECURSION_LIMIT,
  DEFAULT_TOOL_TIMEOUT_SECONDS,
} from "./runtime/run-config.js";
export type { RunConfig } from "./runtime/run-config.js";
export type { ResumeInput, RunInput, RunResult } from "./runtime/run-result.js";
export type { NodeContext } from "./runtime/node-context.js";

export type { Checkpointer, ThreadStatus, ThreadSummary } from "./storage/checkpointer.js";
export { InMemoryCheckpointer } from "./storage/in-memory-checkpointer.js";
export type { InMemoryCheckpointerOptions } from "./storage/in-memory-checkpointer.js";
export { MAX_ID_LENGTH } from "./storage/json-check.js";

export { TenxgraphError, isTenxgraphError } from "./errors/tenxgraph-error.js";
export {
  ClaimLostError,
  GraphRecursionError,
  GraphValidationError,
  InvalidRunError,
  ModelError,
  NodeOutputError,
  NodeTimeoutError,
  RunAbandonedError,
  StaleStateError,
  StorageError,
  StorageSchemaError,
  ThreadOwnerError,
  ToolError,
} from "./errors/errors.js";
export type { CommittedProgress } from "./errors/errors.js";
export { ERROR_CODES } from "./errors/codes.js";
export {
  UnknownOptionError,
  requireKnownOptions,
  LANGGRAPH_OPTION_HINTS,
} from "./errors/unknown-option.js";
export type { OptionHints } from "./errors/unknown-option.js";
export type { ErrorCode } from "./errors/codes.js";

export type {
  EmitEvent,
  NodeEvent,
  RunMode,
  RunStatus,
  StreamEvent,
} from "./events/stream-event.js";
export type { RunEvent } from "./runtime/run-event.js";
export { STREAM_MODES } from "./runtime/stream-mode.js";
export type {
  DebugChunk,
  MessagesChunk,
  StreamChunks,
  StreamConfig,
  StreamMode,
  StreamModeOption,
  StreamOutput,
} from "./runtime/stream-mode.js";
export { jsonLogger, silentLogger, withFields } from "./events/logger.js";
export type { Logger } from "./events/logger.js";
export { METER_NAME } from "./events/metrics.js";
