/**
 * tenxgraph's HTTP API server: `createApp` (an embeddable Hono app) and `serve`.
 * @module
 */
export { createApp } from "./app/app.js";
export type { AppOptions, TenxgraphApp } from "./app/app.js";
export { serve } from "./app/serve.js";
export { attachGraphSocket, BEARER_PROTOCOL, GRAPH_SOCKET_PATH } from "./invoke/graph-socket.js";
export type { GraphSocketServer } from "./invoke/graph-socket.js";
export type { RunningServer, ServeOptions } from "./app/serve.js";
export { ApiError } from "./http/api-error.js";
export type { ErrorDetail } from "./http/api-error.js";
export type { AuthOption, Authenticate, JwtAuthConfig } from "./http/middleware/auth.js";
export type { AuthUser } from "./http/server-env.js";
export type { ThreadNameGenerator } from "./threads/threads-context.js";
export { InMemoryMemoryStore } from "./storage/memory-store.js";
export type { MemoryFilter, MemoryRecord, MemoryStore } from "./storage/memory-store.js";
export { InMemoryFileStore } from "./storage/file-store.js";
export type { FileStore, StoredFile } from "./storage/file-store.js";
export { openApiDocument } from "./app/openapi.js";
export { RunWorker } from "./background/run-worker.js";
export type { RunWorkerOptions } from "./background/run-worker.js";
export { PgRunStore, ThreadBusyError, RunEndedError } from "./background/run-store.js";
export { RunEventFollower } from "./background/run-event-follower.js";
export type {
  BackgroundRunEvent,
  BackgroundRunStatus,
  MultitaskStrategy,
  RunRecord,
  StoredRunEvent,
} from "./background/run-record.js";
export type { RunService } from "./background/runs-context.js";
export { WebhookDeliverer } from "./webhooks/webhook-deliverer.js";
export type { WebhookSettings } from "./webhooks/webhook-settings.js";
export {
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  signWebhook,
  verifyWebhook,
} from "./webhooks/webhook-signature.js";
export { CronScheduler } from "./schedules/cron-scheduler.js";
export { TimerScheduler } from "./timers/timer-scheduler.js";
export type { TimerSchedulerOptions } from "./timers/timer-scheduler.js";
export type { CronSchedulerOptions } from "./schedules/cron-scheduler.js";
export { CronStore, cronStore } from "./schedules/cron-store.js";
