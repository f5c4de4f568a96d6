import type { StreamEvent } from "@tenxgraph/core";
import { streamAsHost } from "@tenxgraph/core/host";
import { toApiError } from "../http/api-error.js";
import { runEarlierAnswers, type PreparedRun } from "./run-request.js";
import type { InvokeContext } from "./invoke-context.js";
import { ChunkMaker, passes, type Granularity, type StreamChunk } from "../wire/stream-chunk.js";

/** A run streaming its events, started far enough that refusing it is behind us. */
export interface StartedStream {
  run: PreparedRun;
  events: AsyncIterator<StreamEvent>;
  /** The events read to see the run start, not sent yet. */
  early: StreamEvent[];
  maker: ChunkMaker;
  /** Aborts the run itself when `signal` aborts (the client left). */
  stopOn(signal: AbortSignal): void;
}

/**
 * Starts the run and reads its events up to the first that shows it under way (its first write
 * done), so an error thrown before that (a conflict, a refused input) is still an answer with
 * its status. Shared by the NDJSON/SSE route and the WebSocket.
 */
export async function startStream(
  ctx: InvokeContext,
  run: PreparedRun,
  recursionLimit: number,
): Promise<StartedStream> {
  await runEarlierAnswers(ctx, run);
  // The client leaving aborts the run itself, not only the reading of its events: a run that
  // sends nothing for a while (a slow tool) would otherwise go on until its next event.
  const disconnect = new AbortController();
  const config = { ...run.config, signal: disconnect.signal };
  const stream = streamAsHost(ctx.graph, run.input, config, run.controls);
  const events = stream[Symbol.asyncIterator]();
  const early = await firstEvents(events);
  const meta = { is_new_thread: run.isNewThread, thread_id: run.threadId };
  return {
    run,
    events,
    early,
    maker: new ChunkMaker(run.threadId, meta, recursionLimit),
    stopOn(signal) {
      const leave = () => disconnect.abort(new Error("The client disconnected"));
      if (signal.aborted) leave();
      else signal.addEventListener("abort", leave, { once: true });
    },
  };
}

/**
 * Sends a started run's chunks through `write` until it ends: the echo of the input, then its
 * events as chunks that pass `granularity`, then the thread's name when the thread is new. An
 * error after the start is already in the events (an `error` chunk); it is logged, not rethrown.
 */
export async function pumpStream(
  ctx: InvokeContext,
  { run, events, early, maker }: StartedStream,
  granularity: Granularity,
  write: (chunk: StreamChunk) => void | Promise<void>,
): Promise<void> {
  const send = async (event: StreamEvent) => {
    for (const chunk of maker.fromEvent(event)) if (passes(chunk, granularity)) await write(chunk);
  };
  try {
    for (const message of run.inputMessages) await write(maker.input(message));
    for (const event of early) await send(event);
    for (;;) {
      const next = await events.next();
      if (next.done) break;
      await send(next.value);
    }
    if (run.threadName !== undefined) {
      const metadata = { thread_name: run.threadName };
      await write(maker.chunk("updates", { data: { status: "completed" }, metadata }));
    }
  } catch (error) {
    ctx.logger.warn({ err: error, threadId: run.threadId }, "Stream ended with an error");
  } finally {
    await events.return?.(undefined);
  }
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
