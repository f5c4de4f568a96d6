import { isTenxgraphError, uuidv7 } from "@tenxgraph/core";
import type { Context, Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { authorizeThread } from "../threads/ownership.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import { prepareRun } from "../invoke/run-request.js";
import { FINAL_RUN_STATUSES, toWireRun, type RunRecord, type RunRequest } from "./run-record.js";
import { graphInputSchema, pageQuerySchema } from "../wire/request-schemas.js";
import type { RunService, ServerContext } from "../http/server-context.js";
import type { AuthUser, ServerEnv } from "../http/server-env.js";
import { streamFrames } from "../http/sse.js";

/** `POST /v1/threads/{thread_id}/runs`: the invoke body, plus what to do on a busy thread. */
export const createRunSchema = z.intersection(
  graphInputSchema,
  z.object({ multitask_strategy: z.enum(["reject", "enqueue", "interrupt"]).default("reject") }),
);

/** How long a stream or join sleeps between reads when no notification wakes it. */
const FALLBACK_WAKE_MS = 1000;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

/**
 * Background runs: queued with `POST`, executed by any worker (`tenxgraph worker`, or
 * `tenxgraph api --workers N`), read, cancelled, streamed from the start or from
 * `Last-Event-ID`, and joined. Same auth and ownership as every thread route.
 */
export function runRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.post("/v1/threads/:thread_id/runs", async (c) => {
    const runs = requireRuns(ctx);
    const threadId = pathId(c, "thread_id");
    const user = c.get("user");
    // Ownership before the body: another user learns nothing about the thread, not even
    // whether their body would have been valid.
    await authorizeRunThread(ctx, runs, user, threadId);
    const body = await readBody(c, createRunSchema);
    const request = await backgroundRequest(ctx, user, threadId, body);
    try {
      const run = await runs.store.createRun({
        runId: uuidv7(),
        threadId,
        userId: user.authenticated ? user.id : null,
        strategy: body.multitask_strategy,
        request,
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
  });

  app.get("/v1/threads/:thread_id/runs", async (c) => {
    const runs = requireRuns(ctx);
    const threadId = pathId(c, "thread_id");
    const { offset, limit } = readQuery(c, pageQuerySchema);
    await authorizeRunThread(ctx, runs, c.get("user"), threadId);
    const list = await runs.store.listRuns(threadId, { offset, limit });
    return ok(c, { runs: list.map(toWireRun) });
  });

  app.get("/v1/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await findRun(c, ctx);
    return ok(c, toWireRun(run));
  });

  app.post("/v1/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const run = await findRun(c, ctx);
    try {
      const cancelled = await requireRuns(ctx).store.cancelRun(run.runId);
      return ok(c, toWireRun(cancelled), "Cancel requested", 202);
    } catch (error) {
      if (isTenxgraphError(error, "RUNS_002")) throw new ApiError(409, "RUN_ENDED", error.message);
      throw error;
    }
  });

  app.get("/v1/threads/:thread_id/runs/:run_id/join", async (c) => {
    const runs = requireRuns(ctx);
    let run = await findRun(c, ctx);
    const signal = AbortSignal.any([c.req.raw.signal, ctx.closing.signal]);
    while (!FINAL_RUN_STATUSES.includes(run.status) && !signal.aborted) {
      await runs.follower.wait(run.runId, FALLBACK_WAKE_MS, signal);
      const now = await runs.store.getRun(run.runId);
      if (!now)
        throw new ApiError(404, "NOT_FOUND", `Run '${run.runId}' was deleted with its thread`);
      run = now;
    }
    return ok(c, toWireRun(run));
  });

  app.get("/v1/threads/:thread_id/runs/:run_id/stream", async (c) => {
    const runs = requireRuns(ctx);
    const run = await findRun(c, ctx);
    const after = lastEventId(c);
    return streamFrames(c, "text/event-stream; charset=utf-8", async (send, clientGone) => {
      const gone = AbortSignal.any([clientGone, ctx.closing.signal]);
      let seen = after;
      let lastSentAt = Date.now();
      for (;;) {
        const batch = await runs.store.readEvents(run.runId, seen);
        for (const { seq, event } of batch) {
          await send(`id: ${seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
          seen = seq;
          lastSentAt = Date.now();
          if (event.type === "run_status") return;
        }
        if (gone.aborted) return;
        if (batch.length > 0) continue;
        // Nothing new: a run that ended before `Last-Event-ID` has nothing more to send.
        const now = await runs.store.getRun(run.runId);
        if (!now || FINAL_RUN_STATUSES.includes(now.status)) {
          const rest = await runs.store.readEvents(run.runId, seen);
          if (rest.length === 0) return;
          continue;
        }
        if (Date.now() - lastSentAt >= KEEPALIVE_MS) {
          await send(": keep-alive\n\n");
          lastSentAt = Date.now();
        }
        await runs.follower.wait(run.runId, FALLBACK_WAKE_MS, gone);
      }
    });
  });
}

function requireRuns(ctx: ServerContext): RunService {
  if (ctx.runs) return ctx.runs;
  throw new ApiError(
    501,
    "RUNS_NOT_CONFIGURED",
    "Background runs need PostgreSQL for their queue: set runs.postgres_dsn in tenxgraph.json " +
      "(or the TENXGRAPH_RUNS_DSN environment variable) and start a worker",
  );
}

/**
 * Ownership of a thread's runs: the thread's owner once it exists; before its first write (a
 * run still queued), the user who queued its runs.
 */
async function authorizeRunThread(
  ctx: ServerContext,
  runs: RunService,
  user: AuthUser,
  threadId: string,
): Promise<void> {
  const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, "run on");
  if (checkpoint || !user.authenticated) return;
  const [latest] = await runs.store.listRuns(threadId, { limit: 1, offset: 0 });
  if (latest && latest.userId !== user.id) {
    throw new ApiError(403, "PERMISSION_DENIED", `Not authorized to run on thread '${threadId}'`);
  }
}

/** The path's run, on the path's thread, if the caller may see it; else 403 or 404. */
async function findRun(c: Context<ServerEnv>, ctx: ServerContext): Promise<RunRecord> {
  const runs = requireRuns(ctx);
  const threadId = pathId(c, "thread_id");
  const runId = pathId(c, "run_id");
  const user = c.get("user");
  await authorizeRunThread(ctx, runs, user, threadId);
  const run = await runs.store.getRun(runId);
  if (!run || run.threadId !== threadId) {
    throw new ApiError(404, "NOT_FOUND", `Run '${runId}' not found on thread '${threadId}'`);
  }
  if (user.authenticated && run.userId !== user.id) {
    throw new ApiError(403, "PERMISSION_DENIED", `Not authorized to read run '${runId}'`);
  }
  return run;
}

/**
 * The request as a worker will run it: checked and prepared exactly like `POST
 * /v1/graph/invoke` (message ids minted, ownership, the user from auth), minus what a
 * background run cannot do: remote tools need the caller to answer while the run waits.
 */
async function backgroundRequest(
  ctx: ServerContext,
  user: AuthUser,
  threadId: string,
  body: z.infer<typeof createRunSchema>,
): Promise<RunRequest> {
  if ((body.config as { remote_tools?: unknown[] } | null | undefined)?.remote_tools?.length) {
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      "Background runs cannot use remote tools (the caller answers them while the run waits): " +
        "use POST /v1/graph/stream",
      [{ loc: ["body", "config", "remote_tools"], msg: "not allowed here", type: "value_error" }],
    );
  }
  if ((body.config as { from_version?: unknown } | null | undefined)?.from_version !== undefined) {
    // A takeover would fork again from the old version after the first attempt's fork began.
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      "Background runs cannot fork (config.from_version): fork with POST /v1/graph/invoke or " +
        "/v1/graph/stream, then continue in the background",
      [{ loc: ["body", "config", "from_version"], msg: "not allowed here", type: "value_error" }],
    );
  }
  const prepared = await prepareRun(ctx, user, {
    ...body,
    config: { ...(body.config ?? {}), thread_id: threadId },
  });
  if (prepared.earlierAnswers.length > 0 || prepared.config.remoteTools?.length) {
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      "This thread waits for remote tool results: answer them with POST /v1/graph/invoke",
      [{ loc: ["body", "messages"], msg: "remote tool answers", type: "value_error" }],
    );
  }
  const { config } = prepared;
  return {
    input: prepared.input,
    config: {
      threadId,
      userId: config.userId ?? null,
      ...(config.recursionLimit === undefined ? {} : { recursionLimit: config.recursionLimit }),
      ...(config.nodeTimeout === undefined ? {} : { nodeTimeout: config.nodeTimeout }),
      ...(config.toolTimeout === undefined ? {} : { toolTimeout: config.toolTimeout }),
      ...(config.durableCheckpointEveryStep === undefined
        ? {}
        : { durableCheckpointEveryStep: config.durableCheckpointEveryStep }),
    },
  };
}

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
