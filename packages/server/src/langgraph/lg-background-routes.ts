import { z } from "zod";
import type { Context } from "hono";
import { ApiError } from "../http/api-error.js";
import { readBody } from "../http/request-input.js";
import type { ServerEnv } from "../http/server-env.js";
import { streamFrames } from "../http/sse.js";
import {
  cancelBackgroundRun,
  createBackgroundRun,
  hasEnded,
  requireRunOf,
} from "./lg-background.js";
import type { LgContext } from "./lg-context.js";
import { lgJson, lgRoutes, unsupported } from "./lg-http.js";
import { lgRunOf, type LgRunRecord } from "./lg-run-registry.js";
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

/** The run the path names, on a thread the caller may read. */
async function pathRun(c: Context<ServerEnv>, ctx: LgContext): Promise<LgRunRecord> {
  const threadId = c.req.param("thread_id")!;
  await requireLgThread(ctx, c.get("user"), threadId, "read");
  return requireRunOf(ctx, threadId, c.req.param("run_id")!);
}

/** `Last-Event-ID`: the last event the client has (an event's id is its position, from 1). */
function lastEventId(c: Context<ServerEnv>): number {
  const raw = c.req.header("last-event-id");
  if (raw === undefined || raw === "" || raw === "-1") return 0;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw unsupported(["header", "last-event-id"], `not an event id of this run: '${raw}'`);
  return value;
}

/** Sends the run's events after `after`, then live ones, until it has ended and all are sent. */
async function followRun(
  ctx: LgContext,
  record: LgRunRecord,
  after: number,
  send: (text: string) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  let sent = after;
  while (!signal.aborted) {
    const next = ctx.lgRuns.next(record.run_id, signal);
    for (; sent < record.events.length; sent++) {
      const { event, data } = record.events[sent]!;
      await send(`id: ${sent + 1}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    }
    if (hasEnded(record)) return;
    await next;
  }
}

async function createRun(c: Context<ServerEnv>, ctx: LgContext, threadId: string | null) {
  const body = await readBody(c, runCreateSchema);
  const record = await createBackgroundRun(ctx, c.get("user"), threadId, body);
  c.header("Content-Location", `/threads/${record.thread_id}/runs/${record.run_id}`);
  return c.json(lgRunOf(record));
}

const runAnswer = lgJson("The run (LangGraph's Run)");

/**
 * LangGraph's background runs, run by this process: create (on a thread and stateless),
 * list, get, cancel, join, join stream (from `Last-Event-ID`), delete.
 */
export const lgBackgroundRoutes = lgRoutes([
  {
    method: "post",
    path: "/threads/{thread_id}/runs",
    summary: "Start a background run on a thread (LangGraph)",
    body: runCreateSchema,
    responses: runAnswer,
    handler: (c, ctx) => createRun(c, ctx, c.req.param("thread_id")!),
  },
  {
    method: "post",
    path: "/runs",
    summary: "Start a stateless background run (LangGraph)",
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
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      await requireLgThread(ctx, c.get("user"), threadId, "read");
      const { limit, offset, status } = parseQuery(c, listQuery);
      const runs = ctx.lgRuns.ofThread(threadId).filter((r) => !status || r.status === status);
      return c.json(runs.slice(offset, offset + limit).map(lgRunOf));
    },
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
    summary: "Forget an ended background run (LangGraph)",
    responses: { 204: { description: "Deleted", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const record = await pathRun(c, ctx);
      if (!hasEnded(record))
        throw new ApiError(
          409,
          "RUN_NOT_ENDED",
          `Run '${record.run_id}' has not ended: cancel it first`,
        );
      ctx.lgRuns.delete(record.run_id);
      return c.body(null, 204);
    },
  },
  {
    method: "post",
    path: "/threads/{thread_id}/runs/{run_id}/cancel",
    summary: "Cancel a background run (LangGraph; action interrupt)",
    query: cancelQuery,
    responses: runAnswer,
    handler: async (c, ctx) => {
      const record = await pathRun(c, ctx);
      const { wait, action } = parseQuery(c, cancelQuery);
      if (action === "rollback")
        throw unsupported(
          ["query", "action"],
          "rollback is not supported: it would drop versions whose tool calls the ledger keeps; use interrupt",
        );
      return c.json(await cancelBackgroundRun(ctx, record, wait === "1" || wait === "true"));
    },
  },
  {
    method: "get",
    path: "/threads/{thread_id}/runs/{run_id}/join",
    summary: "Wait for a background run to end: the thread's values (LangGraph)",
    responses: lgJson("The thread's values after the run"),
    handler: async (c, ctx) => {
      const record = await pathRun(c, ctx);
      await record.done;
      const checkpoint = await ctx.checkpointer.getCheckpoint(record.thread_id);
      const state = checkpoint
        ? await graphOfThread(ctx, checkpoint).getState({ threadId: record.thread_id })
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
      const record = await pathRun(c, ctx);
      const after = lastEventId(c);
      c.header("Content-Location", `/threads/${record.thread_id}/runs/${record.run_id}`);
      return streamFrames(c, "text/event-stream; charset=utf-8", (send, gone) =>
        followRun(ctx, record, after, send, AbortSignal.any([gone, ctx.closing.signal])),
      );
    },
  },
]);
