import type { Route } from "../http/route-table.js";
import {
  backgroundRunResponse,
  queuedRunResponse,
  runEventResponse,
  runListResponse,
} from "../wire/response-schemas.js";
import type { RunsContext } from "./runs-context.js";
import { isTenxgraphError } from "@tenxgraph/core";
import { uuidv7 } from "@tenxgraph/core/host";
import type { Context } from "hono";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { requestTraceContext } from "../http/trace-context.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import { toWireRun } from "./run-record.js";
import { authorizeRunThread, backgroundRequest, findRun, requireRuns } from "./run-access.js";
import { joinRun, sendRunEvents } from "./run-follow.js";
import { runWebhook } from "./run-webhooks.js";
import { createRunSchema, pageQuerySchema } from "../wire/request-schemas.js";
import type { ServerEnv } from "../http/server-env.js";
import { streamFrames } from "../http/sse.js";

/**
 * Background runs: queued with `POST`, executed by any worker (`tenxgraph worker`, or
 * `tenxgraph api --workers N`), read, cancelled, streamed from the start or from
 * `Last-Event-ID`, and joined. Same auth and ownership as every thread route.
 */
export const runRoutes: Route<RunsContext>[] = [
  {
    method: "post",
    path: "/v1/threads/{thread_id}/runs",
    summary: "Queue a background run (202); multitask_strategy: reject, enqueue or interrupt",
    responses: {
      202: { description: "Queued", schema: queuedRunResponse },
    },
    body: createRunSchema,
    handler: async (c, ctx) => {
      const runs = requireRuns(ctx);
      const threadId = pathId(c, "thread_id");
      const user = c.get("user");
      // Ownership before the body: another user learns nothing about the thread, not even
      // whether their body would have been valid.
      const grant = await authorizeRunThread(ctx, runs, user, threadId);
      const body = await readBody(c, createRunSchema);
      const webhook = runWebhook(runs, body.webhook);
      const request = await backgroundRequest(
        ctx,
        user,
        threadId,
        body,
        requestTraceContext(c.req.raw),
        grant,
      );
      try {
        const run = await runs.store.createRun({
          runId: uuidv7(),
          threadId,
          userId: user.authenticated ? user.id : null,
          strategy: body.multitask_strategy,
          request: webhook ? { ...request, webhook } : request,
        });
        return ok(
          c,
          { run_id: run.runId, thread_id: run.threadId, status: run.status },
          "Run queued",
          202,
        );
      } catch (error) {
        if (isTenxgraphError(error, "RUNS_001"))
          throw new ApiError(409, "THREAD_BUSY", error.message);
        throw error;
      }
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/runs",
    summary: "The thread's background runs, newest first",
    responses: {
      200: { description: "The thread's background runs", schema: runListResponse },
    },
    query: pageQuerySchema,
    handler: async (c, ctx) => {
      const runs = requireRuns(ctx);
      const threadId = pathId(c, "thread_id");
      const { offset, limit } = readQuery(c, pageQuerySchema);
      await authorizeRunThread(ctx, runs, c.get("user"), threadId);
      const list = await runs.store.listRuns(threadId, { offset, limit });
      return ok(c, { runs: list.map(toWireRun) });
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/runs/{run_id}",
    summary: "One background run",
    responses: {
      200: { description: "The run", schema: backgroundRunResponse },
    },
    handler: async (c, ctx) => {
      const run = await findRun(ctx, c.get("user"), pathId(c, "thread_id"), pathId(c, "run_id"));
      return ok(c, toWireRun(run));
    },
  },
  {
    method: "post",
    path: "/v1/threads/{thread_id}/runs/{run_id}/cancel",
    summary: "Cancel a background run",
    responses: {
      202: { description: "Cancel requested", schema: backgroundRunResponse },
    },
    handler: async (c, ctx) => {
      const run = await findRun(ctx, c.get("user"), pathId(c, "thread_id"), pathId(c, "run_id"));
      try {
        const cancelled = await requireRuns(ctx).store.cancelRun(run.runId);
        return ok(c, toWireRun(cancelled), "Cancel requested", 202);
      } catch (error) {
        if (isTenxgraphError(error, "RUNS_002"))
          throw new ApiError(409, "RUN_ENDED", error.message);
        throw error;
      }
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/runs/{run_id}/join",
    summary: "Wait for a background run to end",
    responses: {
      200: { description: "The run, ended", schema: backgroundRunResponse },
    },
    handler: async (c, ctx) => {
      const runs = requireRuns(ctx);
      const run = await findRun(ctx, c.get("user"), pathId(c, "thread_id"), pathId(c, "run_id"));
      const signal = AbortSignal.any([c.req.raw.signal, ctx.closing.signal]);
      return ok(c, toWireRun(await joinRun(runs, run, signal)));
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/runs/{run_id}/stream",
    summary: "A background run's events as SSE, from the start or after Last-Event-ID, then live",
    responses: {
      200: {
        description: "The run's events, one per SSE event (`id:` numbers it)",
        schema: runEventResponse,
        body: "sse",
      },
    },
    handler: async (c, ctx) => {
      const runs = requireRuns(ctx);
      const run = await findRun(ctx, c.get("user"), pathId(c, "thread_id"), pathId(c, "run_id"));
      const after = lastEventId(c);
      return streamFrames(c, "text/event-stream; charset=utf-8", (send, clientGone) =>
        sendRunEvents(runs, run, after, send, AbortSignal.any([clientGone, ctx.closing.signal])),
      );
    },
  },
];

/** `Last-Event-ID` (the header a reconnecting EventSource sends) or `?last_event_id=`. */
function lastEventId(c: Context<ServerEnv>): number {
  const raw = c.req.header("last-event-id") ?? c.req.query("last_event_id");
  if (raw === undefined || raw === "") return 0;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      `Last-Event-ID must be a non-negative integer (an event id of this run), got '${raw}'`,
      [{ loc: ["header", "last-event-id"], msg: "not an event id", type: "value_error" }],
    );
  }
  return value;
}
