import { invokeAsHost } from "@tenxgraph/core/host";
import { invokeResultResponse, streamChunkResponse } from "../wire/response-schemas.js";
import type { Route } from "../http/route-table.js";
import type { InvokeContext } from "./invoke-context.js";
import { ok } from "../http/envelope.js";
import { readBody } from "../http/request-input.js";
import { invokeAnswer } from "./invoke-answer.js";
import { prepareRun, runEarlierAnswers } from "./run-request.js";
import { pumpStream, startStream } from "./run-stream.js";
import { graphInputSchema } from "../wire/request-schemas.js";
import { track } from "../http/shutdown.js";
import { requestTraceContext } from "../http/trace-context.js";
import { streamChunks, streamFormat } from "../http/sse.js";

/**
 * `POST /v1/graph/invoke` and `POST /v1/graph/stream`: one run of the graph, through the same
 * `invoke`/`stream` as in-process callers, so the ledger, deadlines, per-step durable writes and
 * stop apply unchanged.
 */
export const graphRunRoutes: Route<InvokeContext>[] = [
  {
    method: "post",
    path: "/v1/graph/invoke",
    summary: "Run the graph to its end, an interrupt or a stop",
    responses: {
      200: { description: "The run's new messages and its meta", schema: invokeResultResponse },
    },
    body: graphInputSchema,
    handler: async (c, ctx) => {
      const body = await readBody(c, graphInputSchema);
      const run = await prepareRun(ctx, c.get("user"), body, requestTraceContext(c.req.raw));
      await runEarlierAnswers(ctx, run);
      const result = await track(ctx, invokeAsHost(ctx.graph, run.input, run.config, run.controls));
      return ok(c, invokeAnswer(run, result, body.response_granularity));
    },
  },
  {
    method: "post",
    path: "/v1/graph/stream",
    summary: "Run the graph, streaming NDJSON chunks (SSE on Accept: text/event-stream)",
    responses: {
      200: {
        description: "One chunk per line (NDJSON), or per SSE event on Accept: text/event-stream",
        schema: streamChunkResponse,
        body: "ndjson",
      },
    },
    body: graphInputSchema,
    handler: async (c, ctx) => {
      const body = await readBody(c, graphInputSchema);
      const run = await prepareRun(ctx, c.get("user"), body, requestTraceContext(c.req.raw));
      // Answered once the run has really started (its first write is done): a conflict with
      // another execution or a refused input is then a JSON error with its status (409, 422)
      // instead of a 200 with an error line.
      const started = await startStream(ctx, run, body.recursion_limit);
      return streamChunks(c, streamFormat(c.req.header("accept")), (write, gone) => {
        started.stopOn(gone);
        return track(ctx, pumpStream(ctx, started, body.response_granularity, write));
      });
    },
  },
];
