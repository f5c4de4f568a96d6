import { z } from "zod";
import type { Context } from "hono";
import { isTenxgraphError } from "@tenxgraph/core";
import { findRun, requireRuns } from "../background/run-access.js";
import { joinRun, sendRunEvents } from "../background/run-follow.js";
import { FINAL_RUN_STATUSES, type RunRecord } from "../background/run-record.js";
import { ApiError } from "../http/api-error.js";
import { readBody } from "../http/request-input.js";
import type { ServerEnv } from "../http/server-env.js";
import { streamFrames } from "../http/sse.js";
import type { LgContext } from "./lg-context.js";
import { lgJson, lgRoutes, unsupported } from "./lg-http.js";
import {
  lgRunFrames,
  lgRunOf,
  lgStatusOf,
  parseLgEventId,
  queueLgRun,
  type LgEventPosition,
} from "./lg-queued-runs.js";
import { cancelWithRollback } from "./lg-rollback.js";
import { runCreateSchema } from "./lg-run-request.js";
import { graphOfThread, requireLgThread } from "./lg-threads.js";
import { lgValues } from "./lg-values.js";

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]).optional(),
});
const cancelQuery = z.object({
  wait: z.enum(["0", "1", "true", "false"]).default("0"),
  action: z.enum(["interrupt", "rollback"]).default("interrupt"),
});

function parseQuery<T extends z.ZodType>(c: Context<ServerEnv>, schema: T): z.infer<T> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw unsupported(["query", ...issue.path.map(String)], issue.message);
  }
  return parsed.data;
}

/** The run the path names, on the path's thread, if it is the caller's: else 403 or 404. */
function pathRun(c: Context<ServerEnv>, ctx: LgContext): Promise<RunRecord> {
  return findRun(ctx, c.get("user"), c.req.param("thread_id")!, c.req.param("run_id")!);
}

/** `Last-Event-ID`: the last event the client has (see {@link LgEventPosition}). */
function lastEventId(c: Context<ServerEnv>): LgEventPosition {
  const raw = c.req.header("last-event-id") ?? "";
  const position = parseLgEventId(raw);
  if (!position)
    throw unsupported(["header", "last-event-id"], `not an event id of this run: '${raw}'`);
  return position;
}

async function createRun(c: Context<ServerEnv>, ctx: LgContext, threadId: string | null) {
  const body = await readBody(c, runCreateSchema);
  const record = await queueLgRun(ctx, c.get("user"), threadId, body);
  c.header("Content-Location", `/threads/${record.threadId}/runs/${record.runId}`);
  return c.json(lgRunOf(record));
}

/** The thread's runs, newest first, those of `status` only when given. */
async function listRuns(c: Context<ServerEnv>, ctx: LgContext) {
  const runs = requireRuns(ctx);
  const threadId = c.req.param("thread_id")!;
  await requireLgThread(ctx, c.get("user"), threadId, "read");
  const { limit, offset, status } = parseQuery(c, listQuery);
  if (!status) return (await runs.store.listRuns(threadId, { limit, offset })).map(lgRunOf);
  const all = await runs.store.listRuns(threadId, { limit: 1000, offset: 0 });
  return all
    .filter((r) => lgStatusOf(r) === status)
    .slice(offset, offset + limit)
    .map(lgRunOf);
}

const runAnswer = lgJson("The run (LangGraph's Run)");

/**
 * LangGraph's background runs, on the background runs' queue (`tenxgraph worker`, or the
 * API's own workers): create (on a thread and stateless), list, get, cancel, join, join
 * stream (from `Last-Event-ID`), delete. The same store `/v1/threads/{id}/runs` reads.
 */
export const lgBackgroundRoutes = lgRoutes([
  {
    method: "post",
    path: "/threads/{thread_id}/runs",
    summary: "Queue a background run on a thread (LangGraph)",
    body: runCreateSchema,
    responses: runAnswer,
    handler: (c, ctx) => createRun(c, ctx, c.req.param("thread_id")!),
  },
  {
    method: "post",
    path: "/runs",
    summary: "Queue a stateless background run (LangGraph)",
    body: runCreateSchema,
    responses: runAnswer,
    handler: (c, ctx) => createRun(c, ctx, null),
  },
  {
    method: "get",
    path: "/threads/{thread_id}/runs",
    summary: "The thread's background runs, newest first (LangGraph)",
    query: listQuery,
    responses: lgJson("Runs", z.array(z.looseObject({}))),
    handler: async (c, ctx) => c.json(await listRuns(c, ctx)),
  },
  {
    method: "get",
    path: "/threads/{thread_id}/runs/{run_id}",
    summary: "A background run (LangGraph)",
    responses: runAnswer,
    handler: async (c, ctx) => c.json(lgRunOf(await pathRun(c, ctx))),
  },
  {
    method: "delete",
    path: "/threads/{thread_id}/runs/{run_id}",
    summary: "Delete an ended background run and its events (LangGraph)",
    responses: { 204: { description: "Deleted", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const record = await pathRun(c, ctx);
      if (!(await requireRuns(ctx).store.deleteRun(record.runId)))
        throw new ApiError(
          409,
          "RUN_NOT_ENDED",
          `Run '${record.runId}' has not ended: cancel it first`,
        );
      return c.body(null, 204);
    },
  },
  {
    method: "post",
    path: "/threads/{thread_id}/runs/{run_id}/cancel",
    summary: "Cancel a background run (LangGraph; action interrupt, or rollback: a fork back)",
    query: cancelQuery,
    responses: runAnswer,
    handler: async (c, ctx) => {
      const record = await pathRun(c, ctx);
      const { wait, action } = parseQuery(c, cancelQuery);
      const runs = requireRuns(ctx);
      const cancel = async (run: RunRecord) => {
        try {
          return await runs.store.cancelRun(run.runId);
        } catch (error) {
          if (isTenxgraphError(error, "RUNS_002"))
            throw new ApiError(409, "RUN_ENDED", error.message);
          throw error;
        }
      };
      if (action === "rollback")
        return c.json(
          lgRunOf(await cancelWithRollback(ctx, runs, record, cancel, abortedWith(c, ctx))),
        );
      let cancelled = await cancel(record);
      if (wait === "1" || wait === "true")
        cancelled = await joinRun(runs, cancelled, abortedWith(c, ctx));
      return c.json(lgRunOf(cancelled));
    },
  },
  {
    method: "get",
    path: "/threads/{thread_id}/runs/{run_id}/join",
    summary: "Wait for a background run to end: the thread's values (LangGraph)",
    responses: lgJson("The thread's values after the run"),
    handler: async (c, ctx) => {
      const record = await joinRun(requireRuns(ctx), await pathRun(c, ctx), abortedWith(c, ctx));
      if (!FINAL_RUN_STATUSES.includes(record.status))
        throw new ApiError(503, "SHUTTING_DOWN", "The server is shutting down");
      const checkpoint = await ctx.checkpointer.getCheckpoint(record.threadId);
      const state = checkpoint
        ? await graphOfThread(ctx, checkpoint).getState({ threadId: record.threadId })
        : null;
      return c.json(state ? lgValues(state.values as unknown as Record<string, unknown>) : {});
    },
  },
  {
    method: "get",
    path: "/threads/{thread_id}/runs/{run_id}/stream",
    summary: "A background run's events, from Last-Event-ID, then live (LangGraph)",
    responses: {
      200: {
        description: "The run's SSE events, each with its id",
        schema: z.looseObject({}),
        body: "sse",
      },
    },
    handler: async (c, ctx) => {
      const runs = requireRuns(ctx);
      const record = await pathRun(c, ctx);
      const frames = lgRunFrames(record, lastEventId(c));
      c.header("Content-Location", `/threads/${record.threadId}/runs/${record.runId}`);
      return streamFrames(c, "text/event-stream; charset=utf-8", (send, gone) =>
        sendRunEvents(runs, record, 0, send, AbortSignal.any([gone, ctx.closing.signal]), frames),
      );
    },
  },
]);

/** Aborts when the client leaves or the server shuts down. */
function abortedWith(c: Context<ServerEnv>, ctx: LgContext): AbortSignal {
  return AbortSignal.any([c.req.raw.signal, ctx.closing.signal]);
}
