/**
 * A typed client for the tenxgraph API server: no dependencies; keep-alive `node:http` in Node.js,
 * fetch in browsers.
 * @module
 */
export { TenxgraphClient } from "./tenxgraph-client.js";
export type { CallOptions, TenxgraphClientOptions } from "./tenxgraph-client.js";
export { ChunkStream } from "./chunk-stream.js";
export { StoreCalls } from "./store-calls.js";
export type { StoreItemWire, StoreNamespaceOptions, StoreSearchOptions } from "./store-calls.js";
export { RunEventStream } from "./background-runs.js";
export type {
  BackgroundRun,
  BackgroundRunStatus,
  MultitaskStrategy,
  QueuedRun,
  RunStreamEvent,
  RunStreamOptions,
} from "./background-runs.js";
export { ndjsonLines } from "./ndjson-lines.js";
export type { TokenSource } from "./http-transport.js";
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  ServerError,
  TenxgraphClientError,
  ValidationError,
  isClientError,
} from "./client-error.js";
export type { ClientErrorInit, ApiErrorCode, ErrorDetail } from "./client-error.js";
export { messageText, userMessage } from "./wire-message.js";
export { remoteToolCalls, toolResult } from "./remote-tools.js";
export type { RemoteToolCall, RemoteToolDefinition, SetupResult } from "./remote-tools.js";
export type {
  ContentBlock,
  MessageInput,
  MessageRole,
  TextBlock,
  WireMessage,
  WireToolCall,
} from "./wire-message.js";
export type { ExecutionMeta, Interrupt, ThreadStatus, WireState } from "./wire-state.js";
export type { StreamChunk } from "./stream-chunk.js";
export type {
  Granularity,
  InvokeResult,
  InvokeInput,
  RunMeta,
  RunOptions,
  RunStatus,
  StopResult,
} from "./run-types.js";
export type {
  AddMessagesResult,
  ClearStateResult,
  DeleteThreadResult,
  PageOptions,
  StateEdit,
  StateHistoryEntry,
  ThreadInfo,
} from "./thread-types.js";
export type {
  InDoubtCall,
  InDoubtDecision,
  InDoubtDecisionResult,
  LedgerEntry,
} from "./ledger-types.js";
export type { GraphInfo, GraphTools, StateJsonSchema } from "./graph-types.js";
export type { GraphInputBody } from "./run-body.js";
export type { Cron, CronDetail, CronOptions, CronTick, WebhookDelivery } from "./schedules.js";
export type {
  AddMessagesBody,
  CreateCronBody,
  CreateRunBody,
  DeleteAfterBody,
  PruneHistoryBody,
  PutStateBody,
  SetupToolsBody,
  StopBody,
  UpdateStateBody,
} from "./request-bodies.js";
