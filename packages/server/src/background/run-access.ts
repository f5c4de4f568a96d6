import type { Context } from "@opentelemetry/api";
import type { z } from "zod";
import { traceCarrier } from "../http/trace-context.js";
import { ApiError } from "../http/api-error.js";
import type { RunService, RunsContext } from "./runs-context.js";
import type { AuthUser } from "../http/server-env.js";
import { prepareRun } from "../invoke/run-request.js";
import { grantThread, type ThreadGrant } from "../threads/ownership.js";
import type { createRunSchema } from "../wire/request-schemas.js";
import type { RunRecord, RunRequest } from "./run-record.js";

export function requireRuns(ctx: RunsContext): RunService {
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
 * run still queued), the user who queued its runs. Returns the grant, with the thread's
 * checkpoint as read for the check, for a caller that needs it next.
 */
export async function authorizeRunThread(
  ctx: RunsContext,
  runs: RunService,
  user: AuthUser,
  threadId: string,
): Promise<ThreadGrant> {
  const grant = await grantThread(ctx.checkpointer, user, threadId, "run on");
  if (grant.read.checkpoint || !user.authenticated) return grant;
  const [latest] = await runs.store.listRuns(threadId, { limit: 1, offset: 0 });
  if (latest && latest.userId !== user.id) {
    throw new ApiError(403, "PERMISSION_DENIED", `Not authorized to run on thread '${threadId}'`);
  }
  return grant;
}

/** The path's run, on the path's thread, if the caller may see it; else 403 or 404. */
export async function findRun(
  ctx: RunsContext,
  user: AuthUser,
  threadId: string,
  runId: string,
): Promise<RunRecord> {
  const runs = requireRuns(ctx);
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
export async function backgroundRequest(
  ctx: RunsContext,
  user: AuthUser,
  threadId: string,
  body: z.infer<typeof createRunSchema>,
  /** The POST's trace context, carried in the queued run for its attempts' spans. */
  traceContext: Context,
  /** The grant {@link authorizeRunThread} just gave (else the check is made again). */
  grant?: ThreadGrant,
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
  const prepared = await prepareRun(
    ctx,
    user,
    { ...body, config: { ...(body.config ?? {}), thread_id: threadId } },
    undefined,
    grant,
  );
  if (prepared.earlierAnswers.length > 0 || prepared.config.remoteTools?.length) {
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      "This thread waits for remote tool results: answer them with POST /v1/graph/invoke",
      [{ loc: ["body", "messages"], msg: "remote tool answers", type: "value_error" }],
    );
  }
  const { config } = prepared;
  const trace = traceCarrier(traceContext);
  return {
    ...(trace ? { trace } : {}),
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
