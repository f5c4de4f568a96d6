import type { BaseState, CompiledGraph, Logger } from "@tenxgraph/core";
import { createHash } from "node:crypto";
import { earliestTimer } from "../timers/timer-scheduler.js";
import { storedGraphId } from "../wire/thread-name-field.js";
import type { PgRunStore } from "./run-store.js";

/**
 * graphile-worker's task of durable timers: a job due at an interrupt's `resumeAt` that queues
 * the run resuming the thread. Timers ride the run queue's delayed jobs (`run_at`), not a
 * scheduler of their own.
 */
export const TIMER_TASK = "tenxgraph_timer";

/** What a timer's job carries: the thread, the version it paused at, the interrupt to answer. */
interface TimerJob {
  threadId: string;
  version: number;
  interruptId: string;
}

/**
 * Queues the timer of a thread left paused on one (after a run's attempt, before its end is
 * written, so a worker dying in between leaves the run to a takeover that queues it again).
 * Keyed by thread and version: queued again, by a takeover or a retry, it stays one job.
 */
export async function queueTimer(
  store: PgRunStore,
  graph: CompiledGraph<BaseState>,
  threadId: string,
): Promise<void> {
  const checkpoint = await graph.checkpointer.getCheckpoint(threadId);
  const wake = checkpoint && earliestTimer(checkpoint);
  if (!checkpoint || !wake) return;
  const job: TimerJob = { threadId, version: checkpoint.version, interruptId: wake.interruptId };
  await store.pool.query(
    `SELECT graphile_worker.add_job($1, $2::json, run_at := $3::timestamptz, max_attempts := 1000,
       job_key := $4, job_key_mode := 'preserve_run_at')`,
    [TIMER_TASK, JSON.stringify(job), new Date(wake.at).toISOString(), timerKey(job)],
  );
}

/**
 * A timer's job is due: queues the run that answers the interrupt with `null`, as `POST T/runs`
 * would with `{"resume": null, "interrupt_id": …}`, if the thread still stands at the version
 * that paused on it. Otherwise (answered by a human, resumed, deleted) it does nothing. The run
 * id derives from the timer, so a job that runs twice queues one run; a thread with an active
 * run queues none (`reject`).
 */
export async function fireTimer(
  store: PgRunStore,
  graph: CompiledGraph<BaseState>,
  payload: unknown,
  logger: Logger,
): Promise<void> {
  const job = payload as Partial<TimerJob> | null;
  if (typeof job?.threadId !== "string" || typeof job.version !== "number") {
    logger.error({ payload }, "Ignoring a timer job without a thread and version");
    return;
  }
  const { threadId, version, interruptId } = job as TimerJob;
  const checkpoint = await graph.checkpointer.getCheckpoint(threadId);
  if (checkpoint?.version !== version || earliestTimer(checkpoint)?.interruptId !== interruptId) {
    logger.info({ threadId, version }, "Timer not used: the thread moved on before it fired");
    return;
  }
  const runId = timerRunId(job as TimerJob);
  // A thread of a `langgraph.json` graph resumes under it, as the runs that paused it ran.
  const graphId = storedGraphId(checkpoint.values);
  try {
    await store.createRun({
      runId,
      threadId,
      userId: checkpoint.userId,
      strategy: "reject",
      request: {
        input: { resume: null, interruptId },
        config: { threadId, userId: checkpoint.userId },
        ...(graphId === undefined ? {} : { graphId }),
      },
    });
    logger.info({ threadId, runId, interruptId }, "Timer queued the run resuming the thread");
  } catch (error) {
    const code = (error as { code?: string; cause?: { code?: string } }).code;
    const duplicate = (error as { cause?: { code?: string } }).cause?.code === "23505";
    if (code !== "RUNS_001" && !duplicate) throw error;
    logger.info({ threadId, runId, code }, "Timer queued no run: the thread has one already");
  }
}

function timerKey({ threadId, version }: TimerJob): string {
  return `tenxgraph_timer:${version}:${threadId}`;
}

/** A UUID-shaped id, the same for every firing of one timer. */
function timerRunId(job: TimerJob): string {
  const hex = createHash("sha256").update(timerKey(job)).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
