import { ROOT_CONTEXT } from "@opentelemetry/api";
import { isTenxgraphError, type Logger } from "@tenxgraph/core";
import { uuidv7 } from "@tenxgraph/core/host";
import { backgroundRequest, requireRuns } from "../background/run-access.js";
import { runWebhook } from "../background/run-webhooks.js";
import type { RunsContext } from "../background/runs-context.js";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";
import { createRunSchema } from "../wire/request-schemas.js";
import type { ClaimedTick, CronStore, CronWire } from "./cron-store.js";

/** Queues a tick's run as `user`, the schedule's owner; throws why it could not. */
export type CronTickQueuer = (tick: ClaimedTick, user: AuthUser) => Promise<void>;

/**
 * What ticks are queued with: the background runs, and how to queue the run of a schedule made
 * through another API than /v1 (its payload is that API's run body). The app's context has it.
 */
export interface CronContext extends RunsContext {
  cronTicks: Record<Exclude<CronWire, "v1">, CronTickQueuer>;
}

/** Settings of {@link CronScheduler}. */
export interface CronSchedulerOptions {
  /** What the ticks' runs are checked and queued with: the app's context (`app.context`). */
  ctx: CronContext;
  store: CronStore;
  /** How often it looks for ticks due (default 1000 ms). */
  intervalMs?: number;
  /** A tick claimed this long ago whose run was never queued is queued again (default 60 s). */
  requeueAfterMs?: number;
  logger: Logger;
}

/**
 * Starts schedules' ticks: each due tick is claimed in the database (one row per schedule and
 * tick, unique, so any number of schedulers on one database start it once) and queues an
 * ordinary background run, exactly as `POST T/runs` would, as the schedule's owner.
 */
export class CronScheduler {
  readonly #options: CronSchedulerOptions;
  #timer: NodeJS.Timeout | null = null;
  #pass: Promise<void> | null = null;

  constructor(options: CronSchedulerOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.#pass ??= this.runDue()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.#options.logger.warn({ err: error }, "Schedule pass failed"),
        )
        .finally(() => (this.#pass = null));
    }, this.#options.intervalMs ?? 1000);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#pass;
  }

  /** One pass: queues the runs of the ticks due (and of ticks left unqueued). Returns them. */
  async runDue(): Promise<ClaimedTick[]> {
    const { store } = this.#options;
    const stranded = await store.unqueuedTicks(this.#options.requeueAfterMs ?? 60_000);
    const claimed = await store.claimDue(uuidv7);
    const ticks = [...stranded, ...claimed];
    for (const tick of ticks) await store.recordTick(tick, await this.#queue(tick));
    return ticks;
  }

  /** Queues the tick's run; the error that kept it from being queued, or `null`. */
  async #queue(tick: ClaimedTick): Promise<{ code: string; message: string } | null> {
    const { ctx, logger } = this.#options;
    const { cron } = tick;
    const user: AuthUser = {
      id: cron.userId ?? "anonymous",
      claims: {},
      authenticated: cron.userId !== null,
    };
    try {
      if (cron.wire === "v1") await queueV1Tick(ctx, tick, user);
      else await ctx.cronTicks[cron.wire](tick, user);
      logger.info({ cronId: cron.cronId, runId: tick.runId }, "Schedule tick queued a run");
      return null;
    } catch (error) {
      if (isDuplicateRun(error)) return null;
      const code =
        error instanceof ApiError
          ? error.code
          : isTenxgraphError(error, "RUNS_001")
            ? "THREAD_BUSY"
            : ((error as { code?: string }).code ?? "INTERNAL_ERROR");
      const message = error instanceof Error ? error.message : String(error);
      logger.warn({ cronId: cron.cronId, code, err: error }, "Schedule tick queued no run");
      return { code, message };
    }
  }
}

/** A tick of a `/v1/crons` schedule: its payload queued as `POST T/runs` would queue it. */
async function queueV1Tick(ctx: RunsContext, tick: ClaimedTick, user: AuthUser): Promise<void> {
  const runs = requireRuns(ctx);
  const body = createRunSchema.parse(tick.cron.payload);
  const request = await backgroundRequest(ctx, user, tick.threadId, body, ROOT_CONTEXT);
  const webhook = runWebhook(runs, body.webhook);
  await runs.store.createRun({
    runId: tick.runId,
    threadId: tick.threadId,
    userId: tick.cron.userId,
    strategy: body.multitask_strategy,
    request: webhook ? { ...request, webhook } : request,
  });
}

/** The tick's run exists already: an earlier pass queued it before it could record so. */
function isDuplicateRun(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string; constraint?: string } }).cause;
  return cause?.code === "23505" && cause.constraint === "tenxgraph_runs_pkey";
}
