import type { StreamEvent } from "@tenxgraph/core";
import type { Hono } from "hono";
import { toApiError } from "../api-error.js";
import { ok } from "../envelope.js";
import { readBody } from "../request-input.js";
import { remotePlaceholders } from "../remote-tools.js";
import { prepareRun, runEarlierAnswers, type PreparedRun } from "../run-request.js";
import { graphInputSchema } from "../schemas.js";
import { track, type ServerContext } from "../server-context.js";
import type { ServerEnv } from "../server-env.js";
import { streamChunks, streamFormat } from "../sse.js";
import { toWireMessage } from "../wire/convert-message.js";
import { ChunkMaker, passes } from "../wire/stream-chunk.js";
import { toWireState } from "../wire/wire-state.js";

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
    const name = await threadName(ctx, run);
    if (name !== undefined) meta.thread_name = name;
    const data: Record<string, unknown> = {
      messages: [
        ...result.state.messages.slice(run.messagesBefore).map(toWireMessage),
        ...remotePlaceholders(result.interrupts),
      ],
      meta,
    };
    if (body.response_granularity !== "low") {
      data.context = result.state.messages.map(toWireMessage);
      data.summary = null;
    }
    if (body.response_granularity === "full") {
      const state = await ctx.graph.getState({ threadId: run.threadId });
      data.state = state ? toWireState(run.threadId, state) : null;
    }
    return ok(c, data);
  });

  app.post("/v1/graph/stream", async (c) => {
    const body = await readBody(c, graphInputSchema);
    const run = await prepareRun(ctx, c.get("user"), body);
    await runEarlierAnswers(ctx, run);
    // The client leaving aborts the run itself, not only the reading of its events: a run that
    // sends nothing for a while (a slow tool) would otherwise go on until its next event.
    const disconnect = new AbortController();
    const config = { ...run.config, signal: disconnect.signal };
    const events = ctx.graph.stream(run.input, config)[Symbol.asyncIterator]();
    // Wait until the run has really started (its first write is done) before answering: a
    // conflict with another execution or a refused input is then a JSON error with its status
    // (409, 422) instead of a 200 with an error line.
    const early = await firstEvents(events);
    const meta = { is_new_thread: run.isNewThread, thread_id: run.threadId };
    const maker = new ChunkMaker(run.threadId, meta, body.recursion_limit);
    const granularity = body.response_granularity;
    return streamChunks(c, streamFormat(c.req.header("accept")), (write, gone) =>
      track(
        ctx,
        (async () => {
          const leave = () => disconnect.abort(new Error("The client disconnected"));
          if (gone.aborted) leave();
          else gone.addEventListener("abort", leave, { once: true });
          for (const message of run.inputMessages) await write(maker.input(message));
          const send = async (event: StreamEvent) => {
            for (const chunk of maker.fromEvent(event))
              if (passes(chunk, granularity)) await write(chunk);
          };
          try {
            for (const event of early) await send(event);
            for (;;) {
              const next = await events.next();
              if (next.done) break;
              await send(next.value);
            }
            const name = await threadName(ctx, run);
            if (name !== undefined)
              await write(
                maker.chunk("updates", {
                  data: { status: "completed" },
                  metadata: { thread_name: name },
                }),
              );
          } catch (error) {
            ctx.logger.warn({ err: error, threadId: run.threadId }, "Stream ended with an error");
            // The run already sent its error event; nothing else to write.
          } finally {
            await events.return?.(undefined);
          }
        })(),
      ),
    );
  });
}

/**
 * Events up to and including the first that shows the run under way (anything after
 * `run_start`), or an error thrown before it: that error is the answer.
 */
async function firstEvents(events: AsyncIterator<StreamEvent>): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return seen;
      if (next.value.type === "error") continue; // rethrown by next(): answered as JSON
      seen.push(next.value);
      if (next.value.type !== "run_start") return seen;
    }
  } catch (error) {
    throw toApiError(error);
  }
}

async function threadName(ctx: ServerContext, run: PreparedRun): Promise<string | undefined> {
  if (!run.isNewThread || ctx.threadNames === null) return undefined;
  const texts = run.inputMessages.map((m) =>
    typeof m.content === "string"
      ? m.content
      : m.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
  );
  try {
    return await ctx.threadNames(texts);
  } catch (error) {
    ctx.logger.warn({ err: error, threadId: run.threadId }, "The thread name generator failed");
    return undefined;
  }
}
