import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { joinRun } from "../background/run-follow.js";
import { FINAL_RUN_STATUSES, type RunRecord } from "../background/run-record.js";
import type { RunService } from "../background/runs-context.js";
import { ApiError } from "../http/api-error.js";
import type { LgContext } from "./lg-context.js";
import { graphOfThread } from "./lg-threads.js";

/*
 * LangGraph's `rollback` deletes the stopped run and its checkpoints. Here a rollback is a fork
 * from the version before that run: the state goes back, but the run's versions stay in the
 * history and its recorded tool calls in the ledger, so a call it made is replayed, never made
 * again, when a later run asks for it under the same key (a domain key).
 */

/**
 * The version the running run started from: back along the thread's branch to the first
 * version that run did not write. A 409 when there is none (the run wrote the thread's first).
 */
export async function versionBeforeRun(ctx: LgContext, latest: ThreadCheckpoint): Promise<number> {
  let version: ThreadCheckpoint | null = latest;
  while (version && version.runId === latest.runId && version.parentVersion !== null)
    version = await ctx.checkpointer.getVersion(latest.threadId, version.parentVersion);
  if (!version || version.runId === latest.runId)
    throw new ApiError(
      409,
      "THREAD_BUSY",
      `Thread '${latest.threadId}' has no version from before its running run to roll back to`,
    );
  return version.version;
}

/**
 * The version a rollback goes back to, read before the run it undoes is stopped: the version
 * before the thread's running run; or, when a queued run is active but has not written yet,
 * the thread as it stands (whatever that run writes before it stops is undone). `undefined`
 * when no run is active: there is nothing to undo.
 */
export async function rollbackPoint(
  ctx: LgContext,
  threadId: string,
  queuedRunActive: boolean,
): Promise<number | undefined> {
  const checkpoint = await ctx.checkpointer.getCheckpoint(threadId);
  if (!checkpoint) return undefined;
  if (checkpoint.status === "running") return versionBeforeRun(ctx, checkpoint);
  return queuedRunActive ? checkpoint.version : undefined;
}

/**
 * `runs.cancel(..., { action: "rollback" })`: the run is cancelled and waited for (its last
 * write would race the fork), then the thread is written as it stood before the run, a fork
 * whose parent is that version. A run not started yet ends at once and wrote nothing.
 */
export async function cancelWithRollback(
  ctx: LgContext,
  runs: RunService,
  record: RunRecord,
  cancel: (record: RunRecord) => Promise<RunRecord>,
  signal: AbortSignal,
): Promise<RunRecord> {
  const before =
    record.status === "running" ? await rollbackPoint(ctx, record.threadId, true) : undefined;
  const ended = await joinRun(runs, await cancel(record), signal);
  if (!FINAL_RUN_STATUSES.includes(ended.status))
    throw new ApiError(503, "SHUTTING_DOWN", "The server is shutting down");
  const latest = await ctx.checkpointer.getCheckpoint(record.threadId);
  if (before === undefined || !latest || latest.version === before) return ended;
  await graphOfThread(ctx, latest).writeState(
    { threadId: record.threadId },
    { fromVersion: before, expectedVersion: latest.version },
  );
  return ended;
}
