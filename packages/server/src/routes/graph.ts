import type { Hono } from "hono";
import { ApiError } from "../api-error.js";
import { ok } from "../envelope.js";
import { graphInfo, graphTools, stateSchema } from "../graph-info.js";
import { authorizeThread } from "../ownership.js";
import { pathId, readBody } from "../request-input.js";
import { setupInputSchema, stopInputSchema } from "../schemas.js";
import type { ServerContext } from "../server-context.js";
import type { ServerEnv } from "../server-env.js";

/** Health, graph description, stop and setup. */
export function graphRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.get("/ping", (c) => ok(c, "pong"));
  app.get("/v1/graph", (c) => ok(c, graphInfo(ctx.graph, true)));
  app.get("/v1/graph/tools", (c) => ok(c, graphTools(ctx.graph)));
  app.get("/v1/graph:StateSchema", (c) => ok(c, stateSchema(ctx.graph)));

  app.post("/v1/graph/stop", async (c) => {
    const { thread_id: threadId } = await readBody(c, stopInputSchema);
    const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "stop");
    // A stop request is stored in the checkpointer: a run on any process sharing the store sees
    // it at its next poll (within a second), one in this process at once.
    const running = checkpoint?.status === "running";
    if (checkpoint) await ctx.graph.stop({ threadId });
    const reason = checkpoint === null ? "no-state" : running ? undefined : "not-running";
    return ok(c, {
      ok: checkpoint !== null,
      running,
      ...(reason ? { reason } : {}),
      success: checkpoint !== null,
      message: running
        ? "Stop requested"
        : checkpoint
          ? "Thread is not running"
          : "Thread not found",
      thread_id: threadId,
      status: running ? "stop_requested" : checkpoint ? "not_running" : "no_state",
    });
  });

  app.post("/v1/graph/fix", async (c) => {
    const { thread_id: threadId } = await readBody(c, stopInputSchema);
    const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "fix");
    // Nothing to remove: transcripts are append-only, and unanswered tool calls are finished by
    // continuing the run (`"continue": true`), their completed calls replayed from the ledger.
    return ok(c, {
      success: false,
      message: checkpoint
        ? 'Nothing removed: tenxgraph transcripts are append-only; continue the run with {"continue": true} to finish unanswered tool calls'
        : "Thread not found",
      removed_count: 0,
      state: null,
    });
  });

  app.get("/v1/observability/:thread_id", async (c) => {
    const threadId = pathId(c, "thread_id");
    await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
    // Run traces are not kept by the server (use the OpenTelemetry metrics and logs).
    return ok(c, { thread_id: threadId, run_count: 0, run_ids: [], run: null });
  });

  app.post("/v1/graph/setup", async (c) => {
    await readBody(c, setupInputSchema);
    if (ctx.authConfigured) {
      throw new ApiError(
        403,
        "PERMISSION_DENIED",
        "Remote tool setup is disabled when auth is configured",
      );
    }
    throw new ApiError(
      422,
      "REMOTE_TOOLS_UNSUPPORTED",
      "Remote (client-side) tools are not supported by tenxgraph: define tools in the graph",
    );
  });
}
