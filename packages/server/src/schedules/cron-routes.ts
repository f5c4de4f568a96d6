import { ROOT_CONTEXT } from "@opentelemetry/api";
import { uuidv7 } from "@tenxgraph/core/host";
import { authorizeRunThread, backgroundRequest, requireRuns } from "../background/run-access.js";
import { runWebhook } from "../background/run-webhooks.js";
import type { RunsContext } from "../background/runs-context.js";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import type { Route } from "../http/route-table.js";
import type { AuthUser } from "../http/server-env.js";
import { createCronSchema, pageQuerySchema } from "../wire/request-schemas.js";
import {
  cronDeletedResponse,
  cronDetailResponse,
  cronListResponse,
  cronResponse,
} from "../wire/response-schemas.js";
import { cronStore, type CronRecord, type CronStore } from "./cron-store.js";
import { scheduleProblem } from "./cron-time.js";

/** Schedules: background runs queued on a cron, owned per user like threads. */
export const cronRoutes: Route<RunsContext>[] = [
  {
    method: "post",
    path: "/v1/crons",
    summary: "Schedule a background run on a cron (a thread, or a fresh thread per tick)",
    responses: { 201: { description: "Scheduled", schema: cronResponse } },
    body: createCronSchema,
    handler: async (c, ctx) => {
      const runs = requireRuns(ctx);
      const user = c.get("user");
      const body = await readBody(c, createCronSchema);
      const { schedule, timezone, thread_id: threadId } = body;
      const problem = scheduleProblem(schedule, timezone);
      if (problem) {
        throw new ApiError(422, "VALIDATION_ERROR", problem, [
          { loc: ["body", "schedule"], msg: problem, type: "value_error" },
        ]);
      }
      runWebhook(runs, body.webhook);
      if (threadId !== null) await authorizeRunThread(ctx, runs, user, threadId);
      // Checked now as a run would be at its tick, so a body no tick could run is refused.
      await backgroundRequest(ctx, user, threadId ?? uuidv7(), body, ROOT_CONTEXT);
      const cron = await cronStore(runs.store.pool).create({
        cronId: uuidv7(),
        wire: "v1",
        userId: user.authenticated ? user.id : null,
        schedule,
        timezone,
        threadId,
        payload: runBody(JSON.parse(await c.req.text()) as Record<string, unknown>),
      });
      return ok(c, toWireCron(cron), "Scheduled", 201);
    },
  },
  {
    method: "get",
    path: "/v1/crons",
    summary: "The caller's schedules, newest first",
    responses: { 200: { description: "The caller's schedules", schema: cronListResponse } },
    query: pageQuerySchema,
    handler: async (c, ctx) => {
      const { offset, limit } = readQuery(c, pageQuerySchema);
      const user = c.get("user");
      const list = await cronStore(requireRuns(ctx).store.pool).list(
        user.authenticated ? user.id : null,
        { offset, limit },
      );
      return ok(c, { crons: list.map(toWireCron) });
    },
  },
  {
    method: "get",
    path: "/v1/crons/{cron_id}",
    summary: "One schedule, with its latest ticks and their runs",
    responses: { 200: { description: "The schedule", schema: cronDetailResponse } },
    handler: async (c, ctx) => {
      const store = cronStore(requireRuns(ctx).store.pool);
      const cron = await findCron(store, c.get("user"), pathId(c, "cron_id"));
      const ticks = await store.ticks(cron.cronId);
      return ok(c, {
        ...toWireCron(cron),
        ticks: ticks.map((t) => ({
          tick_at: t.tick_at.toISOString(),
          run_id: t.run_id,
          thread_id: t.thread_id,
          queued: t.queued_at !== null,
          error: t.error,
        })),
      });
    },
  },
  {
    method: "delete",
    path: "/v1/crons/{cron_id}",
    summary: "Delete a schedule (its runs already queued stay)",
    responses: { 200: { description: "Deleted", schema: cronDeletedResponse } },
    handler: async (c, ctx) => {
      const store = cronStore(requireRuns(ctx).store.pool);
      const cron = await findCron(store, c.get("user"), pathId(c, "cron_id"));
      await store.delete(cron.cronId);
      return ok(c, {
        success: true,
        message: "Schedule deleted",
        data: { cron_id: cron.cronId },
      });
    },
  },
];

/** The schedule, if the caller may see it: 404 when there is none, 403 when another user's. */
async function findCron(store: CronStore, user: AuthUser, cronId: string): Promise<CronRecord> {
  const cron = await store.get(cronId);
  if (!cron) throw new ApiError(404, "NOT_FOUND", `Schedule '${cronId}' not found`);
  if (user.authenticated && cron.userId !== user.id) {
    throw new ApiError(403, "PERMISSION_DENIED", `Not authorized to use schedule '${cronId}'`);
  }
  return cron;
}

/**
 * The run body each tick queues: the request as sent, minus the schedule's own fields. Kept as
 * sent (not as parsed), so each tick parses it again, minting fresh message ids.
 */
function runBody(sent: Record<string, unknown>): Record<string, unknown> {
  const { schedule: _s, timezone: _t, thread_id: _id, ...body } = sent;
  return body;
}

function toWireCron(cron: CronRecord) {
  return {
    cron_id: cron.cronId,
    schedule: cron.schedule,
    timezone: cron.timezone,
    thread_id: cron.threadId,
    multitask_strategy: (cron.payload.multitask_strategy ?? "reject") as
      "reject" | "enqueue" | "interrupt",
    next_run_at: cron.nextTickAt,
    created_at: cron.createdAt,
    updated_at: cron.updatedAt,
  };
}
