import { isRunLeaseHeld, uuidv7 } from "@tenxgraph/core/host";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";
import { track } from "../http/shutdown.js";
import type { LgContext } from "./lg-context.js";
import { pumpLgRun, startLgRun } from "./lg-run-exec.js";
import { lgRunOf, type LgRunRecord, type LgRunStatus } from "./lg-run-registry.js";
import { prepareLgRun, type LgRun, type RunCreateBody } from "./lg-run-request.js";
import { unsupported } from "./lg-http.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `runs.create`: checks the request as a foreground run does (nothing written when refused),
 * then runs it in this process, recording its events for `joinStream` and `join`. A thread
 * with a run not ended is a 409 under `reject` (the default); under `enqueue` the new run waits
 * for it (`pending`), then runs.
 */
export async function createBackgroundRun(
  ctx: LgContext,
  user: AuthUser,
  threadId: string | null,
  body: RunCreateBody,
): Promise<LgRunRecord> {
  if (body.after_seconds)
    throw unsupported(["body", "after_seconds"], "delayed runs are not supported");
  const enqueue = body.multitask_strategy === "enqueue";
  const previous = threadId === null ? undefined : ctx.lgRuns.lastActive(threadId);
  const run = await prepareLgRun(ctx, user, threadId, body, false);
  const leaseHeld = await isRunLeaseHeld(ctx.checkpointer, run.threadId);
  if ((previous || leaseHeld) && !enqueue)
    throw new ApiError(
      409,
      "THREAD_BUSY",
      `Thread '${run.threadId}' has a run in progress (multitask_strategy: reject)`,
    );
  const now = new Date().toISOString();
  const record: LgRunRecord = {
    run_id: uuidv7(),
    thread_id: run.threadId,
    assistant_id: run.assistant.assistant_id,
    created_at: now,
    updated_at: now,
    status: "pending",
    metadata: body.metadata ?? {},
    multitask_strategy: enqueue ? "enqueue" : "reject",
    events: [],
    done: Promise.resolve(),
    abort: new AbortController(),
    cancelled: false,
  };
  ctx.lgRuns.add(record);
  record.done = track(ctx, execute(ctx, record, run, previous)).catch((error: unknown) => {
    ctx.logger.error({ err: error, runId: record.run_id }, "A background run failed");
  });
  return record;
}

/** Waits for the runs before it, runs, and sets the status it ended with. */
async function execute(
  ctx: LgContext,
  record: LgRunRecord,
  run: LgRun,
  previous?: LgRunRecord,
): Promise<void> {
  await previous?.done;
  while (!record.cancelled && (await isRunLeaseHeld(ctx.checkpointer, record.thread_id)))
    await sleep(200);
  if (record.cancelled) return ctx.lgRuns.setStatus(record, "interrupted");
  ctx.lgRuns.setStatus(record, "running");
  let failed = false;
  try {
    const started = await startLgRun(run);
    started.stopOn(record.abort.signal);
    await pumpLgRun(
      ctx,
      run,
      started,
      async (event) => {
        if (event.event === "error") failed = true;
        ctx.lgRuns.push(record, event);
      },
      record.run_id,
    );
  } catch (error) {
    failed = true;
    const apiError =
      error instanceof ApiError ? error : new ApiError(500, "INTERNAL_ERROR", String(error));
    ctx.lgRuns.push(record, {
      event: "error",
      data: { error: apiError.code, message: apiError.message },
    });
  }
  ctx.lgRuns.setStatus(record, await endStatus(ctx, run, record.cancelled, failed));
}

async function endStatus(
  ctx: LgContext,
  run: LgRun,
  cancelled: boolean,
  failed: boolean,
): Promise<LgRunStatus> {
  if (cancelled) return "interrupted";
  if (failed) return "error";
  const checkpoint = await ctx.checkpointer.getCheckpoint(run.threadId);
  return checkpoint?.status === "interrupted" ? "interrupted" : "success";
}

/** The thread's run `runId`, else a 404. */
export function requireRunOf(ctx: LgContext, threadId: string, runId: string): LgRunRecord {
  const record = ctx.lgRuns.get(runId);
  if (!record || record.thread_id !== threadId)
    throw new ApiError(404, "NOT_FOUND", `Run '${runId}' not found on thread '${threadId}'`);
  return record;
}

/** True once the run has ended. */
export function hasEnded(record: LgRunRecord): boolean {
  return record.status !== "pending" && record.status !== "running";
}

/** `runs.cancel` with `action: interrupt`: the run stops (the thread is left `stopped`). */
export async function cancelBackgroundRun(ctx: LgContext, record: LgRunRecord, wait: boolean) {
  if (hasEnded(record))
    throw new ApiError(
      409,
      "RUN_ENDED",
      `Run '${record.run_id}' has already ended (${record.status})`,
    );
  record.cancelled = true;
  record.abort.abort(new Error("Cancelled"));
  if (wait) await record.done;
  return lgRunOf(record);
}
