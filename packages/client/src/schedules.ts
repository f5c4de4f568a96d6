import type { MultitaskStrategy } from "./background-runs.js";

/** A schedule as the server answers it (`/v1/crons`). */
export interface Cron {
  cron_id: string;
  schedule: string;
  timezone: string;
  /** The thread every tick runs on; `null`: a fresh thread per tick. */
  thread_id: string | null;
  multitask_strategy: MultitaskStrategy;
  next_run_at: string;
  created_at: string;
  updated_at: string;
}

/** One tick of a schedule: the run it queued, or why it queued none. */
export interface CronTick {
  tick_at: string;
  run_id: string;
  thread_id: string;
  queued: boolean;
  error: { code: string; message: string } | null;
}

/** A schedule with its latest ticks, newest first (`GET /v1/crons/{cron_id}`). */
export interface CronDetail extends Cron {
  ticks: CronTick[];
}

/** Options of `createCron`: when, where, and how each tick's run meets a busy thread. */
export interface CronOptions {
  /** Five cron fields (minute first), or six with seconds first. */
  schedule: string;
  /** An IANA time zone (default `UTC`). */
  timezone?: string;
  /** The thread every tick runs on; absent: a fresh thread per tick. */
  threadId?: string;
  multitaskStrategy?: MultitaskStrategy;
  /** Where each tick's run reports its end, signed. */
  webhook?: string;
  signal?: AbortSignal;
}

/** One webhook delivery of a run (`GET /v1/threads/{id}/runs/{run_id}/webhooks`). */
export interface WebhookDelivery {
  event_id: string;
  type: string;
  url: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}
