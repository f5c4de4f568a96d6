import { isTenxgraphError, type BaseState } from "@tenxgraph/core";
import { invokeAsHost, streamAsHost } from "@tenxgraph/core/host";
import { toApiError } from "../http/api-error.js";
import { track } from "../http/shutdown.js";
import type { LgContext } from "./lg-context.js";
import type { LgRun } from "./lg-run-request.js";
import { engineModes, LgStreamMapper, type LgEvent } from "./lg-stream.js";
import { lgInterrupt, lgValues } from "./lg-values.js";

type Chunk = [string, unknown];

/** A run streaming, started far enough that refusing it (a conflict, bad input) is behind us. */
export interface StartedLgRun {
  runId: string;
  chunks: AsyncIterator<Chunk>;
  early: Chunk[];
  /** Aborts the run when `signal` aborts (`on_disconnect: cancel`). */
  stopOn(signal: AbortSignal): void;
}

/** Starts the run and reads its chunks up to its `run_start`: errors before it are answers. */
export async function startLgRun(run: LgRun): Promise<StartedLgRun> {
  const abort = new AbortController();
  const config = { ...run.config, signal: abort.signal, streamMode: engineModes(run.modes) };
  const chunks = streamAsHost(run.graph, run.input, config, run.controls)[
    Symbol.asyncIterator
  ]() as AsyncIterator<Chunk>;
  const early: Chunk[] = [];
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) break;
      early.push(next.value);
      const [mode, data] = next.value;
      if (mode === "events" && (data as { type: string }).type === "run_start") {
        return { runId: (data as { runId: string }).runId, chunks, early, stopOn: stopper(abort) };
      }
    }
  } catch (error) {
    throw toApiError(error);
  }
  return { runId: "", chunks, early, stopOn: stopper(abort) };
}

function stopper(abort: AbortController) {
  return (signal: AbortSignal) => {
    const leave = () => abort.abort(new Error("The client disconnected"));
    if (signal.aborted) leave();
    else signal.addEventListener("abort", leave, { once: true });
  };
}

/**
 * Sends a started run's events through `send` until it ends: `metadata` (the run id) first,
 * then the modes' events; a failure after the start is an `error` event. A stateless run's
 * thread is deleted at the end unless `on_completion: keep`.
 */
export async function pumpLgRun(
  ctx: LgContext,
  run: LgRun,
  started: StartedLgRun,
  send: (event: LgEvent) => Promise<void>,
  /** The run id the client knows (a background run's); default the engine's. */
  runId = started.runId,
): Promise<void> {
  const mapper = new LgStreamMapper({ ...run, runId, input: run.input });
  let failed = false;
  const forward = async (chunk: Chunk) => {
    for (const event of mapper.map(chunk)) {
      if (event.event === "error") failed = true;
      await send(event);
    }
  };
  try {
    await send({ event: "metadata", data: { run_id: runId, attempt: 1 } });
    for (const chunk of started.early) await forward(chunk);
    for (;;) {
      const next = await started.chunks.next();
      if (next.done) break;
      await forward(next.value);
    }
  } catch (error) {
    const apiError = toApiError(error);
    if (!failed)
      await send({ event: "error", data: { error: apiError.code, message: apiError.message } });
    ctx.logger.warn(
      { err: error, threadId: run.threadId },
      "LangGraph run stream ended with an error",
    );
  } finally {
    await started.chunks.return?.(undefined);
    await finishStateless(ctx, run);
  }
}

/**
 * Runs to the end and answers LangGraph's `runs.wait`: the final values, `__interrupt__` when
 * paused. A run that failed answers as LangGraph's server does, with `__error__` (the SDK
 * throws it unless `raiseError: false`); a refusal (busy thread, bad resume) stays an error status.
 */
export async function waitLgRun(ctx: LgContext, run: LgRun) {
  try {
    const result = await track(ctx, invokeAsHost(run.graph, run.input, run.config, run.controls));
    const values = lgValues(result.state as BaseState & Record<string, unknown>);
    const answer =
      result.status === "interrupted"
        ? { ...values, __interrupt__: result.interrupts.map(lgInterrupt) }
        : values;
    return { runId: result.runId, answer };
  } catch (error) {
    if (toApiError(error).status < 500) throw error;
    ctx.logger.warn({ err: error, threadId: run.threadId }, "A LangGraph runs.wait failed");
    return { runId: null, answer: { __error__: lgErrorOf(error) } };
  } finally {
    await finishStateless(ctx, run);
  }
}

/** A failed run's error as LangGraph names it: our code (else the error's name) and message. */
function lgErrorOf(error: unknown): { error: string; message: string } {
  if (isTenxgraphError(error)) return { error: error.code, message: error.message };
  if (error instanceof Error) return { error: error.name, message: error.message };
  return { error: "Error", message: String(error) };
}

/** A stateless run's thread goes with it (LangGraph's `on_completion: delete`, the default). */
async function finishStateless(ctx: LgContext, run: LgRun): Promise<void> {
  if (!run.stateless || run.body.on_completion === "keep") return;
  await run.graph.deleteThread({ threadId: run.threadId }).catch((error: unknown) => {
    ctx.logger.warn(
      { err: error, threadId: run.threadId },
      "A stateless run's thread was not deleted",
    );
  });
}
