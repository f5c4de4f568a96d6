import type { Hono } from "hono";
import { ok } from "../http/envelope.js";
import { readBody } from "../http/request-input.js";
import { remotePlaceholders } from "./remote-tools.js";
import { prepareRun, runEarlierAnswers } from "./run-request.js";
import { pumpStream, startStream } from "./run-stream.js";
import { graphInputSchema } from "../wire/request-schemas.js";
import { track, type ServerContext } from "../http/server-context.js";
import type { ServerEnv } from "../http/server-env.js";
import { streamChunks, streamFormat } from "../http/sse.js";
import { toWireMessage } from "../wire/convert-message.js";
import { toWireState, wireSummary } from "../wire/wire-state.js";

/**
 * `POST /v1/graph/invoke` and `POST /v1/graph/stream`: one run of the graph, through the same
 * `invoke`/`stream` as in-process callers, so the ledger, deadlines, per-step durable writes and
 * stop apply unchanged.
 */
export function graphRunRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.post("/v1/graph/invoke", async (c) => {
    const body = await readBody(c, graphInputSchema);
    const run = await prepareRun(ctx, c.get("user"), body);
    await runEarlierAnswers(ctx, run);
    const result = await track(ctx, ctx.graph.invoke(run.input, run.config));
    const meta: Record<string, unknown> = {
      is_new_thread: run.isNewThread,
      thread_id: run.threadId,
      run_id: result.runId,
      status: result.status,
      version: result.version,
      interrupts: result.interrupts,
    };
    if (run.threadName !== undefined) meta.thread_name = run.threadName;
    const data: Record<string, unknown> = {
      messages: [
        ...result.state.messages.slice(run.messagesBefore).map(toWireMessage),
        ...remotePlaceholders(result.interrupts),
      ],
      meta,
    };
    if (body.response_granularity !== "low") {
      data.context = result.state.messages.map(toWireMessage);
      data.summary = wireSummary(result.state as unknown as Record<string, unknown>);
    }
    if (body.response_granularity === "full") {
      // The run's result is the thread as committed: no read after the run.
      const { state, version, currentNode, step, status, interrupts } = result;
      const thread = { values: state, version, currentNode, step, status, interrupts };
      data.state = toWireState(run.threadId, thread);
    }
    return ok(c, data);
  });

  app.post("/v1/graph/stream", async (c) => {
    const body = await readBody(c, graphInputSchema);
    const run = await prepareRun(ctx, c.get("user"), body);
    // Answered once the run has really started (its first write is done): a conflict with
    // another execution or a refused input is then a JSON error with its status (409, 422)
    // instead of a 200 with an error line.
    const started = await startStream(ctx, run, body.recursion_limit);
    return streamChunks(c, streamFormat(c.req.header("accept")), (write, gone) => {
      started.stopOn(gone);
      return track(ctx, pumpStream(ctx, started, body.response_granularity, write));
    });
  });
}
