/**
 * tenxgraph's HTTP API server: `createApp` (an embeddable Hono app) and `serve`.
 * @module
 */
export { createApp } from "./app.js";
export type { AppOptions, TenxgraphApp } from "./app.js";
export { serve } from "./serve.js";
export { attachGraphSocket, BEARER_PROTOCOL, GRAPH_SOCKET_PATH } from "./ws/graph-socket.js";
export type { GraphSocketServer } from "./ws/graph-socket.js";
export type { RunningServer, ServeOptions } from "./serve.js";
export { ApiError } from "./api-error.js";
export type { ErrorDetail } from "./api-error.js";
export type { AuthOption, Authenticate, JwtAuthConfig } from "./middleware/auth.js";
export type { AuthUser } from "./server-env.js";
export type { ThreadNameGenerator } from "./server-context.js";
export { InMemoryMemoryStore } from "./storage/memory-store.js";
export type { MemoryFilter, MemoryRecord, MemoryStore } from "./storage/memory-store.js";
export { InMemoryFileStore } from "./storage/file-store.js";
export type { FileStore, StoredFile } from "./storage/file-store.js";
export { openApiDocument } from "./routes/openapi.js";
export { RunWorker } from "./runs/run-worker.js";
export type { RunWorkerOptions } from "./runs/run-worker.js";
export { PgRunStore, ThreadBusyError, RunEndedError } from "./runs/run-store.js";
export { RunEventFollower } from "./runs/run-event-follower.js";
export type {
  BackgroundRunEvent,
  BackgroundRunStatus,
  MultitaskStrategy,
  RunRecord,
  StoredRunEvent,
} from "./runs/run-record.js";
export type { RunService } from "./server-context.js";
