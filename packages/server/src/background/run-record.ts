import type { BackgroundRun, BackgroundRunStatus, MultitaskStrategy } from "@tenxgraph/client";
export type { BackgroundRunStatus };
import type { BaseState, RunInput, StreamEvent } from "@tenxgraph/core";

/**
 * Where a background run stands. `pending`: queued (first time, or handed back by a draining or
 * lost worker); `running`: a worker holds it and heartbeats it; the rest are final.
 * `interrupted` is a run that paused for an answer (`interrupt()`), or that a newer run on the
 * thread stopped (`multitask_strategy: "interrupt"`).
 */

/** Final statuses: a run in one of them never runs again. */
export const FINAL_RUN_STATUSES: readonly BackgroundRunStatus[] = [
  "interrupted",
  "completed",
  "failed",
  "cancelled",
];

/** What a new run does when its thread already has an active (pending or running) run. */
export type { MultitaskStrategy };

/** Why a worker is asked to stop a running run. */
export type StopReason = "cancel" | "interrupt";

/**
 * What a worker needs to run the request again in any process: the run's input (messages with
 * their ids minted at `POST`, so a worker can tell whether an earlier attempt wrote it) and its
 * config, as plain JSON.
 */
export interface RunRequest {
  input: RunInput<BaseState>;
  config: {
    threadId: string;
    userId: string | null;
    recursionLimit?: number;
    nodeTimeout?: number | null;
    toolTimeout?: number | null;
    durableCheckpointEveryStep?: boolean;
    /** Static breakpoints of this run (LangGraph's `interrupt_before`): node names or `"*"`. */
    interruptBefore?: "*" | readonly string[];
    interruptAfter?: "*" | readonly string[];
    /**
     * The version the run forks from (LangGraph's `rollback`: the version before the run it
     * stopped). Only until it forked: a later attempt, once the thread moved past the version
     * the run began from, goes on from where the earlier one left (see `forkVersion`).
     */
    fromVersion?: number;
  };
  /**
   * The trace context of the request that queued the run, as the headers that carry it
   * (`traceparent`, `tracestate`): every attempt's spans join that trace. Absent without an
   * OpenTelemetry propagator, or when the request carried none.
   */
  trace?: Record<string, string>;
  /** The served graph that runs it (a `langgraph.json` graph id); absent: the default graph. */
  graphId?: string;
  /**
   * The engine's stream modes whose chunks the run's stream records beside its events, for an
   * API that streams them (LangGraph's `values`, `updates`, `messages`, `custom`, `tasks`,
   * `checkpoints`, `debug`).
   */
  chunkModes?: ChunkMode[];
  /** The thread goes once the run has ended (a stateless LangGraph run, `on_completion: delete`). */
  deleteThreadAfter?: boolean;
  /** What the API that queued the run keeps with it, opaque to the queue and its workers. */
  meta?: Record<string, unknown>;
  /**
   * Where the run's end (and any call found in doubt) is posted, signed; fixed when the run is
   * queued (the run's own `webhook`, else the server's `webhooks.url`). The statement that
   * writes the run's events reads it (`OWE_DELIVERIES`, `webhooks/webhook-schema.ts`).
   */
  webhook?: string;
}

/** An engine stream mode a run's stream can record (see {@link RunRequest.chunkModes}). */
export type ChunkMode =
  "values" | "updates" | "messages" | "custom" | "tasks" | "checkpoints" | "debug";

/**
 * Whether a later attempt can tell that the first one wrote the input only by the thread's
 * version: a new input without messages, or a fork. Messages carry ids minted at `POST`, a resume is told
 * by the interrupts still pending, and a continuation has no input, so those need no read of
 * the thread when a run starts.
 */
export function needsBaseVersion(request: RunRequest): boolean {
  const { input } = request;
  // A fork's later attempt asks whether the thread moved since the run began.
  if (request.config.fromVersion !== undefined) return true;
  if (input === null || "resume" in input) return false;
  return !(input as { messages?: unknown[] }).messages?.length;
}

/** A run as the store keeps it. */
export interface RunRecord {
  runId: string;
  threadId: string;
  userId: string | null;
  status: BackgroundRunStatus;
  multitaskStrategy: MultitaskStrategy;
  request: RunRequest;
  /** The worker holding the run (`host:pid`), or that held it last. */
  workerId: string | null;
  /** Attempts begun so far; each begins on a worker and is fenced by this number. */
  attempts: number;
  /**
   * The thread's version when the first attempt began, kept only for a new input without
   * messages (see {@link needsBaseVersion}); `null` otherwise.
   */
  baseVersion: number | null;
  stopRequested: StopReason | null;
  error: { code: string | null; message: string } | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * What a run's stream carries, in order, numbered from 1 per run: the core's events of each
 * attempt (with the chunks of its `chunkModes`, when it asked for some), and the run's own: an attempt beginning on a worker, a hand-back to the queue, and
 * the final status (always the last event).
 */
export type BackgroundRunEvent =
  | StreamEvent
  | { type: "chunk"; mode: ChunkMode; data: unknown }
  | { type: "run_attempt"; attempt: number; workerId: string }
  | { type: "run_requeued"; reason: "drain" | "worker_lost"; workerId: string | null }
  | {
      type: "run_status";
      status: Exclude<BackgroundRunStatus, "pending" | "running">;
      error?: { code: string | null; message: string };
    };

/** One stored event with its number in the run. */
export interface StoredRunEvent {
  seq: number;
  event: BackgroundRunEvent;
}

/** The wire shape of a run (`GET /v1/threads/{thread_id}/runs/{run_id}`). */
export function toWireRun(run: RunRecord): BackgroundRun {
  return {
    run_id: run.runId,
    thread_id: run.threadId,
    status: run.status,
    multitask_strategy: run.multitaskStrategy,
    worker_id: run.workerId,
    attempts: run.attempts,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    ...(run.error ? { error: run.error } : {}),
  };
}

/** What a worker is told about its runs at a heartbeat. */
export interface HeartbeatAnswer {
  /** Runs still held, with any stop asked for them. */
  held: Map<string, StopReason | null>;
}

/** How an attempt ended, for {@link PgRunStore.finishAttempt}. */
export type AttemptOutcome =
  | {
      kind: "final";
      status: Exclude<BackgroundRunStatus, "pending" | "running">;
      error?: RunRecord["error"];
    }
  | { kind: "requeue"; reason: "drain" };

/** The attempt a worker holds: the fence of every write it makes to the run. */
export interface AttemptRef {
  runId: string;
  attempt: number;
  workerId: string;
}

/** The graphile-worker job an attempt is taken through, and the worker that locked it. */
export interface QueueJob {
  id: string;
  lockedBy: string;
}
