import type { Context } from "hono";
import { z } from "zod";
import { uuidv7 } from "@tenxgraph/core/host";
import { requireRuns } from "../background/run-access.js";
import { validationError } from "../http/api-error.js";
import { readBody } from "../http/request-input.js";
import type { ServerEnv } from "../http/server-env.js";
import { cronStore, type CronFilter, type CronPage } from "../schedules/cron-store.js";
import type { LgContext } from "./lg-context.js";
import {
  cronCountSchema,
  cronCreateSchema,
  cronPatchSchema,
  cronSearchSchema,
  filterAssistant,
  findLgCron,
  lgCronOf,
  planLgCron,
} from "./lg-crons.js";
import { lgJson, lgRoutes } from "./lg-http.js";
import { requireLgThread } from "./lg-threads.js";

const cronAnswer = lgJson("The cron (LangGraph's Cron)");

/** `sort_by` of LangGraph's cron search as the store's column. */
const SORT_COLUMNS: Record<string, CronPage["orderBy"]> = {
  cron_id: "cron_id",
  assistant_id: "payload->>'assistant_id'",
  thread_id: "thread_id",
  created_at: "created_at",
  updated_at: "updated_at",
  next_run_date: "next_tick_at",
};

/** The caller's LangGraph crons on the schedules' store (PostgreSQL; else a 501 as on /v1). */
function storeOf(ctx: LgContext) {
  return cronStore(requireRuns(ctx).store.pool);
}

/** A cron on the path's thread (the caller's, else 403 or 404) or stateless (`null`). */
async function createCron(c: Context<ServerEnv>, ctx: LgContext, threadId: string | null) {
  const store = storeOf(ctx);
  const user = c.get("user");
  const body = await readBody(c, cronCreateSchema);
  if (threadId !== null) await requireLgThread(ctx, user, threadId, "run on");
  const plan = planLgCron(ctx, user, body, threadId === null);
  const cron = await store.create({
    cronId: uuidv7(),
    wire: "langgraph",
    userId: user.authenticated ? user.id : null,
    threadId,
    ...plan,
  });
  return c.json(lgCronOf(cron));
}

/** Which crons a search or count reads: the caller's, of LangGraph's routes. */
function filterOf(
  c: Context<ServerEnv>,
  ctx: LgContext,
  query: z.infer<typeof cronCountSchema>,
): CronFilter | null {
  const user = c.get("user");
  const assistantId = filterAssistant(ctx, query.assistant_id);
  if (query.assistant_id && !assistantId) return null;
  return {
    wire: "langgraph",
    userId: user.authenticated ? user.id : null,
    ...(query.thread_id ? { threadId: query.thread_id } : {}),
    payload: {
      ...(assistantId ? { assistant_id: assistantId } : {}),
      ...(query.metadata ? { metadata: query.metadata } : {}),
    },
  };
}

/**
 * LangGraph's crons, over the schedules of `/v1/crons`: the same store and the same scheduler
 * (every API node's, each tick claimed once in the database); each tick queues the cron's
 * `RunCreate` as `runs.create` does. Another user's cron is not found.
 */
export const lgCronRoutes = lgRoutes([
  {
    method: "post",
    path: "/threads/{thread_id}/runs/crons",
    summary: "Schedule background runs on a thread (LangGraph)",
    body: cronCreateSchema,
    responses: cronAnswer,
    handler: (c, ctx) => createCron(c, ctx, c.req.param("thread_id")!),
  },
  {
    method: "post",
    path: "/runs/crons",
    summary: "Schedule stateless background runs, a new thread per tick (LangGraph)",
    body: cronCreateSchema,
    responses: cronAnswer,
    handler: (c, ctx) => createCron(c, ctx, null),
  },
  {
    method: "post",
    path: "/runs/crons/search",
    summary: "The caller's crons (LangGraph)",
    body: cronSearchSchema,
    responses: lgJson("Crons", z.array(z.looseObject({}))),
    handler: async (c, ctx) => {
      const query = await readBody(c, cronSearchSchema);
      const filter = filterOf(c, ctx, query);
      if (!filter || query.enabled === false) return c.json([]);
      const crons = await storeOf(ctx).search(filter, {
        orderBy: SORT_COLUMNS[query.sort_by ?? "created_at"]!,
        descending: (query.sort_order ?? "desc") === "desc",
        limit: query.limit,
        offset: query.offset,
      });
      const select = query.select;
      return c.json(
        crons
          .map(lgCronOf)
          .map((cron) =>
            select
              ? Object.fromEntries(Object.entries(cron).filter(([k]) => select.includes(k)))
              : cron,
          ),
      );
    },
  },
  {
    method: "post",
    path: "/runs/crons/count",
    summary: "Count the caller's matching crons (LangGraph)",
    body: cronCountSchema,
    responses: lgJson("How many", z.number()),
    handler: async (c, ctx) => {
      const filter = filterOf(c, ctx, await readBody(c, cronCountSchema));
      return c.json(filter ? await storeOf(ctx).count(filter) : 0);
    },
  },
  {
    method: "patch",
    path: "/runs/crons/{cron_id}",
    summary: "Change a cron's schedule or runs (LangGraph)",
    body: cronPatchSchema,
    responses: cronAnswer,
    handler: async (c, ctx) => {
      const user = c.get("user");
      const store = storeOf(ctx);
      const cron = await findLgCron(store, user, c.req.param("cron_id")!);
      const patch = await readBody(c, cronPatchSchema);
      const { on_completion, ...stored } = cron.payload;
      const parsed = cronCreateSchema.safeParse({
        ...stored,
        schedule: cron.schedule,
        timezone: cron.timezone,
        ...(on_completion === undefined ? {} : { on_run_completed: on_completion }),
        ...patch,
      });
      // Each field passed alone; together with the cron's own they may not (a 422, not a 500).
      if (!parsed.success) throw validationError("body", parsed.error);
      const merged = parsed.data;
      const plan = planLgCron(ctx, user, merged, cron.threadId === null);
      return c.json(lgCronOf((await store.update(cron.cronId, plan)) ?? cron));
    },
  },
  {
    method: "delete",
    path: "/runs/crons/{cron_id}",
    summary: "Delete a cron (its runs already queued stay) (LangGraph)",
    responses: { 204: { description: "Deleted", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const store = storeOf(ctx);
      const cron = await findLgCron(store, c.get("user"), c.req.param("cron_id")!);
      await store.delete(cron.cronId);
      return c.body(null, 204);
    },
  },
]);
