import type { WebhookSettings } from "../webhooks/webhook-settings.js";
import type { InvokeContext } from "../invoke/invoke-context.js";
import type { RunEventFollower } from "./run-event-follower.js";
import type { PgRunStore } from "./run-store.js";

/** Background runs: their store and queue on PostgreSQL, and the waker of their readers. */
export interface RunService {
  store: PgRunStore;
  follower: RunEventFollower;
  /** Webhooks of runs' ends (`webhook` on `POST T/runs`); absent or null: refused. */
  webhooks?: WebhookSettings | null;
}

/** What the background-run routes work with: they start runs as the invoke routes do. */
export interface RunsContext extends InvokeContext {
  /** `null` when not configured (the routes answer 501). */
  runs: RunService | null;
}
