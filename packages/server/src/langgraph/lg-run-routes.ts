import { z } from "zod";
import type { Context } from "hono";
import type { ServerEnv } from "../http/server-env.js";
import { readBody } from "../http/request-input.js";
import { streamFrames } from "../http/sse.js";
import { track } from "../http/shutdown.js";
import type { LgContext } from "./lg-context.js";
import { lgJson, lgRoutes } from "./lg-http.js";
import { prepareLgRun, runCreateSchema, type RunCreateBody } from "./lg-run-request.js";
import { lgRunFrames, queueLgRun } from "./lg-queued-runs.js";
import { sendRunEvents } from "../background/run-follow.js";
import type { RunService } from "../background/runs-context.js";
import { pumpLgRun, startLgRun, waitLgRun } from "./lg-run-exec.js";
import type { LgEvent } from "./lg-stream.js";

/** Where a run is read: LangGraph's clients take the run id from this header. */
function runLocation(threadId: string, runId: string, stateless: boolean): string {
  return stateless ? `/runs/${runId}` : `/threads/${threadId}/runs/${runId}`;
}

/** One SSE event as LangGraph frames it (JSON never holds a raw newline: one data line). */
function sseFrame({ event, data }: LgEvent): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

async function streamRun(c: Context<ServerEnv>, ctx: LgContext, threadId: string | null) {
  const body = await readBody(c, runCreateSchema);
  if (body.stream_resumable && ctx.runs) return streamQueuedRun(c, ctx, ctx.runs, threadId, body);
  const run = await prepareLgRun(ctx, c.get("user"), threadId, body);
  const started = await startLgRun(run);
  c.header("Content-Location", runLocation(run.threadId, started.runId, run.stateless));
  return streamFrames(c, "text/event-stream; charset=utf-8", (send, gone) => {
    // LangGraph's default: a run goes on when its client leaves, unless it asked to cancel.
    if (body.on_disconnect === "cancel") started.stopOn(gone);
    return track(
      ctx,
      pumpLgRun(ctx, run, started, (event) => send(sseFrame(event))),
    );
  });
}

/**
 * `stream_resumable: true` (what `useStream` sends with `reconnectOnMount`): the run is queued
 * as `runs.create` queues it, and this answer follows its stored events, so a client that
 * leaves (a reload) rejoins with `joinStream` from its last event id, in any API process.
 */
async function streamQueuedRun(
  c: Context<ServerEnv>,
  ctx: LgContext,
  runs: RunService,
  threadId: string | null,
  body: RunCreateBody,
) {
  const record = await queueLgRun(ctx, c.get("user"), threadId, body);
  c.header("Content-Location", runLocation(record.threadId, record.runId, false));
  return streamFrames(c, "text/event-stream; charset=utf-8", (send, gone) => {
    if (body.on_disconnect === "cancel")
      gone.addEventListener("abort", () => void runs.store.cancelRun(record.runId).catch(() => {}));
    const frames = lgRunFrames(record, { seq: 0, index: 0 });
    return sendRunEvents(
      runs,
      record,
      0,
      send,
      AbortSignal.any([gone, ctx.closing.signal]),
      frames,
    );
  });
}

async function waitRun(c: Context<ServerEnv>, ctx: LgContext, threadId: string | null) {
  const body = await readBody(c, runCreateSchema);
  const run = await prepareLgRun(ctx, c.get("user"), threadId, body);
  const { runId, answer } = await waitLgRun(ctx, run);
  if (runId) c.header("Content-Location", runLocation(run.threadId, runId, run.stateless));
  return c.json(answer);
}

const streamAnswer = {
  200: {
    description: "LangGraph's run stream: SSE events named for their mode",
    schema: z.looseObject({}),
    body: "sse" as const,
  },
};
const waitAnswer = lgJson("The run's final values, with __interrupt__ when it paused");

/** LangGraph's foreground runs: stream and wait, on a thread and stateless. */
export const lgRunRoutes = lgRoutes([
  {
    method: "post",
    path: "/threads/{thread_id}/runs/stream",
    summary: "Run on a thread, streaming (LangGraph)",
    body: runCreateSchema,
    responses: streamAnswer,
    handler: (c, ctx) => streamRun(c, ctx, c.req.param("thread_id")!),
  },
  {
    method: "post",
    path: "/runs/stream",
    summary: "Stateless run, streaming (LangGraph)",
    body: runCreateSchema,
    responses: streamAnswer,
    handler: (c, ctx) => streamRun(c, ctx, null),
  },
  {
    method: "post",
    path: "/threads/{thread_id}/runs/wait",
    summary: "Run on a thread to its end (LangGraph)",
    body: runCreateSchema,
    responses: waitAnswer,
    handler: (c, ctx) => waitRun(c, ctx, c.req.param("thread_id")!),
  },
  {
    method: "post",
    path: "/runs/wait",
    summary: "Stateless run to its end (LangGraph)",
    body: runCreateSchema,
    responses: waitAnswer,
    handler: (c, ctx) => waitRun(c, ctx, null),
  },
]);
