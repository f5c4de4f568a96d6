import { z } from "zod";
import { requireRuns } from "../background/run-access.js";
import { runWebhook } from "../background/run-webhooks.js";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";
import type { ClaimedTick, CronRecord, CronStore } from "../schedules/cron-store.js";
import { scheduleProblem } from "../schedules/cron-time.js";
import { resolveAssistant } from "./lg-assistants.js";
import type { LgContext } from "./lg-context.js";
import { unsupported } from "./lg-http.js";
import { queueLgRun, refuseForQueue } from "./lg-queued-runs.js";
import { checkLgRun, runCreateSchema, type RunCreateBody } from "./lg-run-request.js";

/** The fields of LangGraph's `CronCreate` that are the schedule's, not its runs'. */
const scheduleFields = {
  schedule: z.string().min(1),
  timezone: z.string().min(1).nullish(),
  end_time: z.string().nullish(),
  enabled: z.boolean().nullish(),
  on_run_completed: z.enum(["delete", "keep"]).nullish(),
  context: z.record(z.string(), z.unknown()).nullish(),
  durability: z.enum(["sync", "async", "exit"]).nullish(),
  checkpoint_during: z.boolean().nullish(),
};

/** The body of `crons.create` and `crons.createForThread`: a run body and its schedule. */
export const cronCreateSchema = runCreateSchema.extend(scheduleFields);
export type CronCreateBody = z.infer<typeof cronCreateSchema>;

/** The body of `crons.update`: any field of a create, merged into the cron's. */
export const cronPatchSchema = cronCreateSchema.partial();

const filterFields = {
  assistant_id: z.string().nullish(),
  thread_id: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
};
export const cronCountSchema = z.looseObject(filterFields);
export const cronSearchSchema = z.looseObject({
  ...filterFields,
  enabled: z.boolean().nullish(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z
    .enum(["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"])
    .nullish(),
  sort_order: z.enum(["asc", "desc"]).nullish(),
  select: z.array(z.string()).nullish(),
});

/** What a schedule made through LangGraph's routes stores: its timing and its runs' body. */
export interface LgCronPlan {
  schedule: string;
  timezone: string;
  /** The `RunCreate` each tick queues, the assistant resolved to its id. */
  payload: RunCreateBody;
}

/**
 * Checks a cron body as each tick will run it (assistant, input, breakpoints, webhook, what a
 * queued run cannot carry) and the schedule: a refusal names the field and writes nothing.
 */
export function planLgCron(
  ctx: LgContext,
  user: AuthUser,
  body: CronCreateBody,
  stateless: boolean,
): LgCronPlan {
  const { schedule, timezone: tz, end_time, enabled, on_run_completed, ...runFields } = body;
  const { context, durability, checkpoint_during, ...run } = runFields;
  refuseUnhonoured({ end_time, enabled, context, durability, checkpoint_during });
  const timezone = tz ?? "UTC";
  const problem = scheduleProblem(schedule, timezone);
  if (problem)
    throw new ApiError(422, "VALIDATION_ERROR", problem, [
      { loc: ["body", tz ? "timezone" : "schedule"], msg: problem, type: "value_error" },
    ]);
  const payload: RunCreateBody = {
    ...run,
    // A stateless tick's thread goes after its run unless kept (LangGraph's default: delete).
    ...(stateless ? { on_completion: on_run_completed ?? "delete" } : {}),
  };
  refuseForQueue(payload);
  const { assistant } = checkLgRun(ctx, user, payload, false);
  runWebhook(requireRuns(ctx), payload.webhook ?? undefined);
  return { schedule, timezone, payload: { ...payload, assistant_id: assistant.assistant_id } };
}

/** Options of LangGraph's crons whose effect this server does not have: a 422 naming each. */
function refuseUnhonoured(fields: Partial<z.infer<z.ZodObject<typeof scheduleFields>>>): void {
  if (fields.end_time)
    throw unsupported(["body", "end_time"], "crons do not end by date here: delete the cron");
  if (fields.enabled === false)
    throw unsupported(["body", "enabled"], "crons cannot be paused here: delete the cron");
  if (fields.context && Object.keys(fields.context).length > 0)
    throw unsupported(["body", "context"], "runs take no run context here: use input or config");
  if (fields.durability && fields.durability !== "sync")
    throw unsupported(
      ["body", "durability"],
      `'${fields.durability}': every step is checkpointed before the next ('sync')`,
    );
  if (fields.checkpoint_during === false)
    throw unsupported(["body", "checkpoint_during"], "every step is checkpointed here");
}

/** The schedule, if it is a LangGraph cron the caller owns; else 404, as LangGraph answers. */
export async function findLgCron(
  store: CronStore,
  user: AuthUser,
  cronId: string,
): Promise<CronRecord> {
  const cron = await store.get(cronId);
  if (!cron || cron.wire !== "langgraph" || (user.authenticated && cron.userId !== user.id))
    throw new ApiError(404, "NOT_FOUND", `Cron '${cronId}' not found`);
  return cron;
}

/** The assistant id a filter names (a graph id or an assistant id), `null` when none. */
export function filterAssistant(ctx: LgContext, id: string | null | undefined): string | null {
  if (!id) return null;
  try {
    return resolveAssistant(ctx, id).assistant.assistant_id;
  } catch {
    return null;
  }
}

/** A schedule as LangGraph's `Cron`. */
export function lgCronOf(cron: CronRecord) {
  const payload = cron.payload as RunCreateBody;
  return {
    cron_id: cron.cronId,
    assistant_id: payload.assistant_id,
    thread_id: cron.threadId,
    ...(cron.threadId === null ? { on_run_completed: payload.on_completion ?? "delete" } : {}),
    end_time: null,
    schedule: cron.schedule,
    timezone: cron.timezone,
    created_at: cron.createdAt,
    updated_at: cron.updatedAt,
    payload,
    user_id: cron.userId,
    next_run_date: cron.nextTickAt,
    metadata: payload.metadata ?? {},
    enabled: true,
  };
}

/**
 * How the scheduler queues a LangGraph cron's tick: its `RunCreate` queued as `runs.create`
 * queues one, under the tick's run id (a stateless cron's on the tick's fresh thread).
 */
export async function queueLgCronTick(
  ctx: LgContext,
  tick: ClaimedTick,
  user: AuthUser,
): Promise<void> {
  const body = runCreateSchema.parse(tick.cron.payload);
  await queueLgRun(ctx, user, tick.cron.threadId, body, {
    runId: tick.runId,
    freshThreadId: tick.threadId,
  });
}
