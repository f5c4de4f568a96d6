import type { Route } from "../http/route-table.js";
import { z } from "zod";
import {
  fixResponse,
  graphInfoResponse,
  graphToolsResponse,
  observabilityResponse,
  setupResultResponse,
  stateJsonSchemaResponse,
  stopResultResponse,
} from "../wire/response-schemas.js";
import type { InvokeContext } from "./invoke-context.js";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { graphInfo, graphTools, stateSchema } from "../wire/graph-info.js";
import { authorizeThread } from "../threads/ownership.js";
import { pathId, readBody } from "../http/request-input.js";
import { setupInputSchema, stopInputSchema } from "../wire/request-schemas.js";
import { attachRemoteTools, stopThread } from "./graph-control.js";

/** Health, graph description, stop and setup. */
export const graphRoutes: Route<InvokeContext>[] = [
  {
    method: "get",
    path: "/ping",
    summary: "Health check",
    responses: {
      200: { description: "`pong`", schema: z.literal("pong") },
    },
    handler: (c) => ok(c, "pong"),
  },
  {
    method: "get",
    path: "/v1/graph",
    summary: "Graph nodes and edges",
    responses: {
      200: { description: "The graph: nodes, edges and facts", schema: graphInfoResponse },
    },
    handler: (c, ctx) => ok(c, graphInfo(ctx.graph, true)),
  },
  {
    method: "get",
    path: "/v1/graph/tools",
    summary: "Tools per tool node",
    responses: {
      200: { description: "The tools of the graph's tool nodes", schema: graphToolsResponse },
    },
    handler: (c, ctx) => ok(c, graphTools(ctx.graph)),
  },
  {
    method: "get",
    path: "/v1/graph:StateSchema",
    summary: "JSON Schema of the state",
    responses: {
      200: { description: "The state's JSON Schema", schema: stateJsonSchemaResponse },
    },
    handler: (c, ctx) => ok(c, stateSchema(ctx.graph)),
  },
  {
    method: "post",
    path: "/v1/graph/stop",
    summary: "Stop the thread's run on any process",
    responses: {
      200: { description: "Whether a stop was requested", schema: stopResultResponse },
    },
    body: stopInputSchema,
    handler: async (c, ctx) => {
      const { thread_id: threadId } = await readBody(c, stopInputSchema);
      const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "stop");
      return ok(c, await stopThread(ctx, threadId, checkpoint));
    },
  },
  {
    method: "post",
    path: "/v1/graph/fix",
    summary: "Nothing to fix: transcripts are append-only",
    responses: {
      200: { description: "Nothing removed", schema: fixResponse },
    },
    body: stopInputSchema,
    handler: async (c, ctx) => {
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
    },
  },
  {
    method: "get",
    path: "/v1/observability/{thread_id}",
    summary: "Run traces (not kept: run_count 0)",
    responses: {
      200: { description: "No traces", schema: observabilityResponse },
    },
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
      // Run traces are not kept by the server (use the OpenTelemetry metrics and logs).
      return ok(c, { thread_id: threadId, run_count: 0, run_ids: [], run: null });
    },
  },
  {
    method: "post",
    path: "/v1/graph/setup",
    summary: "Attach remote tools to tool nodes (403 with auth or MODE=production)",
    responses: {
      200: { description: "The tools attached", schema: setupResultResponse },
    },
    body: setupInputSchema,
    handler: async (c, ctx) => {
      if (!ctx.remoteToolSetup) {
        throw new ApiError(
          403,
          "PERMISSION_DENIED",
          "Remote tool setup is disabled when auth is configured or MODE=production: " +
            "send the tools with each run in config.remote_tools instead",
        );
      }
      const { tools } = await readBody(c, setupInputSchema);
      return ok(c, attachRemoteTools(ctx, tools));
    },
  },
];
