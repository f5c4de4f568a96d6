import { isTenxgraphError } from "@tenxgraph/core";
import { isRunLeaseHeld, uuidv7 } from "@tenxgraph/core/host";
import { requireRuns } from "../background/run-access.js";
import { runWebhook } from "../background/run-webhooks.js";
import type { RunEventFrames } from "../background/run-follow.js";
import type {
  BackgroundRunEvent,
  BackgroundRunStatus,
  ChunkMode,
  RunRecord,
  RunRequest,
} from "../background/run-record.js";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";
import type { LgContext } from "./lg-context.js";
import { unsupported } from "./lg-http.js";
import { rollbackPoint } from "./lg-rollback.js";
import { prepareLgRun, stopRunningRun, type RunCreateBody } from "./lg-run-request.js";
import { engineModes, LgStreamMapper, type LgEvent, type LgStreamMode } from "./lg-stream.js";

/** LangGraph's run status. */
export type LgRunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";

/** Ours as LangGraph's: it has no `cancelled`, and calls a cancelled run `interrupted`. */
const LG_STATUS: Record<BackgroundRunStatus, LgRunStatus> = {
  pending: "pending",
  running: "running",
  completed: "success",
  failed: "error",
  cancelled: "interrupted",
  interrupted: "interrupted",
};

/** What a LangGraph run keeps with the queue's record (`RunRequest.meta`). */
interface LgRunMeta {
  assistant_id: string;
  metadata: Record<string, unknown>;
  stream_mode: LgStreamMode[];
  /** As asked: the queue knows `rollback` as `interrupt` (plus the version to fork from). */
  multitask_strategy?: RunCreateBody["multitask_strategy"];
}

function metaOf(record: RunRecord): LgRunMeta {
  const meta = record.request.meta as Partial<LgRunMeta> | undefined;
  return {
    assistant_id: meta?.assistant_id ?? "",
    metadata: meta?.metadata ?? {},
    stream_mode: meta?.stream_mode ?? ["values"],
    multitask_strategy: meta?.multitask_strategy ?? record.multitaskStrategy,
  };
}

/** Options a queued run cannot carry, refused before anything is written. */
export function refuseForQueue(body: RunCreateBody): void {
  if (body.after_seconds)
    throw unsupported(["body", "after_seconds"], "delayed runs are not supported");
  if (body.command?.update || body.command?.goto)
    throw unsupported(
      ["body", "command", body.command.update ? "update" : "goto"],
      "a background run takes input or command.resume; send a command with update or goto with runs.wait or runs.stream",
    );
  if (body.checkpoint_id || body.checkpoint?.checkpoint_id)
    throw unsupported(
      ["body", "checkpoint_id"],
      "a background run cannot fork (a takeover would fork again): fork with runs.wait or runs.stream, then continue in the background",
    );
}

/**
 * `runs.create`: checked as a foreground run is (a refusal writes nothing), then queued on
 * the background runs' PostgreSQL queue like `POST /v1/threads/{id}/runs`, with what
 * LangGraph's stream modes need recorded beside the run's events. Any worker runs it; its
 * record and events outlive this process. Without a queue, a 501 as on `/v1`.
 */
export async function queueLgRun(
  ctx: LgContext,
  user: AuthUser,
  threadId: string | null,
  body: RunCreateBody,
  /** A schedule's tick: the run's id, and a stateless run's thread (else new ones). */
  ids: { runId: string; freshThreadId: string } = { runId: uuidv7(), freshThreadId: uuidv7() },
): Promise<RunRecord> {
  const runs = requireRuns(ctx);
  refuseForQueue(body);
  const strategy = body.multitask_strategy ?? "reject";
  const run = await prepareLgRun(ctx, user, threadId, body, false, ids.freshThreadId);
  if (strategy === "reject" && (await isRunLeaseHeld(ctx.checkpointer, run.threadId)))
    throw busy(run.threadId);
  const stops = strategy === "interrupt" || strategy === "rollback";
  const queued = stops && (await hasQueuedRun(ctx, run.threadId));
  // Read before the stop: the version before the run this one replaces, recorded with it.
  const fromVersion =
    strategy === "rollback" ? await rollbackPoint(ctx, run.threadId, queued) : undefined;
  // A queued run is stopped by the queue (below); one run by runs.stream or runs.wait here.
  if (stops && !queued) await stopRunningRun(ctx, run.threadId);
  const meta: LgRunMeta = {
    assistant_id: run.assistant.assistant_id,
    metadata: body.metadata ?? {},
    stream_mode: run.modes,
    multitask_strategy: strategy,
  };
  const { recursionLimit, interruptBefore, interruptAfter } = run.config;
  const webhook = runWebhook(runs, body.webhook ?? undefined);
  const request: RunRequest = {
    input: run.input,
    config: {
      threadId: run.threadId,
      userId: run.config.userId ?? null,
      ...(recursionLimit === undefined ? {} : { recursionLimit }),
      ...(interruptBefore === undefined ? {} : { interruptBefore }),
      ...(interruptAfter === undefined ? {} : { interruptAfter }),
      ...(fromVersion === undefined ? {} : { fromVersion }),
    },
    graphId: run.assistant.graph_id,
    chunkModes: engineModes(run.modes).filter((m): m is ChunkMode => m !== "events"),
    deleteThreadAfter: run.stateless && body.on_completion !== "keep",
    meta: { ...meta },
    ...(webhook ? { webhook } : {}),
  };
  try {
    return await runs.store.createRun({
      runId: ids.runId,
      threadId: run.threadId,
      userId: user.authenticated ? user.id : null,
      // The queue stops the active run for a rollback as for interrupt; the fork is the worker's.
      strategy: strategy === "rollback" ? "interrupt" : strategy,
      request,
    });
  } catch (error) {
    if (isTenxgraphError(error, "RUNS_001")) throw busy(run.threadId);
    throw error;
  }
}

/** True when the thread has a queued run not ended (the queue stops it for `interrupt`). */
async function hasQueuedRun(ctx: LgContext, threadId: string): Promise<boolean> {
  const latest = await requireRuns(ctx).store.listRuns(threadId, { limit: 20, offset: 0 });
  return latest.some((r) => r.status === "pending" || r.status === "running");
}

function busy(threadId: string): ApiError {
  return new ApiError(
    409,
    "THREAD_BUSY",
    `Thread '${threadId}' has a run in progress (multitask_strategy: reject)`,
  );
}

/** A queued run as LangGraph's `Run`. */
export function lgRunOf(record: RunRecord) {
  const meta = metaOf(record);
  return {
    run_id: record.runId,
    thread_id: record.threadId,
    assistant_id: meta.assistant_id,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    status: LG_STATUS[record.status],
    metadata: meta.metadata,
    multitask_strategy: meta.multitask_strategy,
    kwargs: {},
  };
}

/** The run's status as LangGraph names it. */
export function lgStatusOf(record: RunRecord): LgRunStatus {
  return LG_STATUS[record.status];
}

/**
 * Where a client is in a run's LangGraph stream: a stored event's number and, as one stored
 * event may make several LangGraph events, the position among them (`7`, then `7-1`, `7-2`).
 */
export interface LgEventPosition {
  seq: number;
  index: number;
}

/** `Last-Event-ID` as a position; `null` when it names none of ours. */
export function parseLgEventId(raw: string): LgEventPosition | null {
  if (raw === "" || raw === "-1") return { seq: 0, index: 0 };
  const match = /^(\d{1,15})(?:-(\d{1,6}))?$/.exec(raw);
  if (!match) return null;
  return { seq: Number(match[1]), index: Number(match[2] ?? 0) };
}

/**
 * The run's stored events as LangGraph's SSE frames, those after `after` only. Every event is
 * mapped from the first, so a stream rejoined mid-message still sends the text so far; each
 * attempt on a worker begins with `metadata` (the run id and the attempt's number).
 */
export function lgRunFrames(record: RunRecord, after: LgEventPosition): RunEventFrames {
  const mapper = new LgStreamMapper({
    modes: metaOf(record).stream_mode,
    threadId: record.threadId,
    runId: record.runId,
    input: record.request.input,
  });
  const state = { attempt: 0, failed: false };
  return ({ seq, event }) => {
    const events = lgEventsOf(mapper, record.runId, event, state);
    const frames: string[] = [];
    for (const [index, { event: name, data }] of events.entries()) {
      if (name === "error") state.failed = true;
      if (seq < after.seq || (seq === after.seq && index <= after.index)) continue;
      const id = index === 0 ? `${seq}` : `${seq}-${index}`;
      frames.push(`id: ${id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    }
    return frames;
  };
}

function lgEventsOf(
  mapper: LgStreamMapper,
  runId: string,
  event: BackgroundRunEvent,
  state: { attempt: number; failed: boolean },
): LgEvent[] {
  switch (event.type) {
    case "run_attempt":
      state.attempt += 1;
      return [{ event: "metadata", data: { run_id: runId, attempt: state.attempt } }];
    case "run_requeued":
      return [];
    case "run_status":
      return event.error && !state.failed
        ? [
            {
              event: "error",
              data: { error: event.error.code ?? "Error", message: event.error.message },
            },
          ]
        : [];
    case "chunk":
      return mapper.map([event.mode, event.data]);
    default:
      return mapper.map(["events", event]);
  }
}
