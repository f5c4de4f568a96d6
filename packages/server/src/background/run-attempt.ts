import {
  isTenxgraphError,
  type BaseState,
  type CompiledGraph,
  type Logger,
  type RunConfig,
  type RunInput,
  type RunStatus,
  type StreamEvent,
} from "@tenxgraph/core";
import { carriedTraceContext } from "../http/trace-context.js";
import { streamAsHost, type HostControls } from "@tenxgraph/core/host";
import type { CheckpointRead, ThreadCheckpoint } from "@tenxgraph/core/storage";
import { EventPump } from "./run-event-pump.js";
import type { BackgroundRunEvent, ChunkMode, RunRecord, StopReason } from "./run-record.js";
import type { AttemptOutcome, AttemptRef } from "./run-record.js";
import type { PgRunStore } from "./run-store.js";

/** How the worker steers an attempt from outside: its heartbeat and its shutdown fire these. */
export interface AttemptControls {
  /** Stops the run like `app.stop` (cancel, or a newer run's `interrupt`); `reason` says which. */
  stop: AbortController;
  stopReason: StopReason | null;
  /** Stops it at the next node boundary, to hand it to another worker (SIGTERM). */
  drain: AbortController;
  /** Another worker took it over: end at once and write nothing (see `abandonSignal`). */
  abandon: AbortController;
}

/** The graph a worker runs, and its id in the project (named in its runs' spans). */
export interface ServedGraph {
  graph: CompiledGraph<BaseState>;
  id: string;
}

/** How {@link runAttempt} runs an attempt. */
export interface AttemptOptions {
  /** The thread, when the worker read it already for this attempt (else read). */
  read?: CheckpointRead;
  /** How long an event waits for the next ones before it is appended (`EVENT_BATCH_MS`). */
  eventBatchMs?: number;
}

/** How an attempt ended, with its events not yet written (they go with its end). */
export interface AttemptEnd {
  outcome: AttemptOutcome;
  events: BackgroundRunEvent[];
}

/**
 * Runs one attempt of a background run to its end and says how it ended, or `null` when the
 * attempt lost the run (another worker holds it now: nothing more may be written). Every event
 * goes to the run's stream as it happens; the last ones, still unsent when the run ends, are
 * returned to be written with the attempt's end, in the same statement.
 */
export async function runAttempt(
  served: ServedGraph,
  store: PgRunStore,
  run: RunRecord,
  ref: AttemptRef,
  controls: AttemptControls,
  logger: Logger,
  { read, eventBatchMs }: AttemptOptions = {},
): Promise<AttemptEnd | null> {
  const { graph } = served;
  const events = new EventPump(
    store,
    ref,
    logger,
    controls.abandon.signal,
    () =>
      controls.abandon.abort(new Error("its events were refused: another worker holds the run")),
    eventBatchMs,
  );
  let ended: RunStatus | null = null;
  let failure: unknown = null;
  /** How the continuation of a stopped thread ended, when it did not finish. */
  let unfinished: RunStatus | null = null;
  const { fromVersion: _forkedOnce, ...config } = run.request.config;
  const options = { ...config, userId: config.userId ?? undefined, signal: controls.stop.signal };
  const steer: HostControls = {
    drainSignal: controls.drain.signal,
    abandonSignal: controls.abandon.signal,
    // Every attempt's spans, a takeover's too, join the trace of the POST that queued the run.
    traceContext: carriedTraceContext(run.request.trace),
    graphId: served.id,
  };
  const streamOf = (input: RunInput<BaseState>, steering: HostControls, fork?: number) => {
    const forked = fork === undefined ? options : { ...options, fromVersion: fork };
    return runStream(graph, input, forked, steering, run.request.chunkModes);
  };
  const follow = async (stream: AsyncIterable<BackgroundRunEvent>) => {
    let status: RunStatus | null = null;
    for await (const event of stream) {
      events.push(event);
      if (event.type === "run_end") status = event.status;
    }
    return status ?? "completed";
  };
  try {
    // Read once and handed to the run: a thread created by someone else after this check makes
    // the run's first write stale instead of landing on it.
    const thread = read ?? (await graph.checkpointer.getCheckpointAndStops(run.threadId));
    const { checkpoint } = thread;
    requireRunOwner(run, checkpoint);
    const input = await attemptInput(graph, run);
    const fork = forkVersion(run, checkpoint);
    // Only a stopped thread can have calls unanswered: the read of its state is skipped otherwise.
    const stopped = checkpoint?.status === "stopped";
    if (fork !== undefined) {
      // A rollback: the stopped run's calls are left behind with its versions.
      ended = await follow(streamOf(input, steer, fork));
    } else if (
      isNewTurn(input) &&
      stopped &&
      (await leftWithUnansweredCalls(graph, run.threadId))
    ) {
      // A run stopped in its tool node (by this run's `interrupt`, or cancelled ahead of it in
      // the queue) left calls unanswered, and a new turn is refused until they are: continue
      // it first, as `invoke(null)` would, then apply this run's input.
      const continued = await follow(streamOf(null, steer));
      if (continued !== "completed") unfinished = continued;
      else ended = await follow(streamOf(input, steer));
    } else {
      const fromRead = { ...steer, loadedThread: thread };
      ended = await follow(streamOf(input, fromRead));
    }
  } catch (error) {
    failure = error;
  }
  const unsent = await events.close();
  if (controls.abandon.signal.aborted || events.lost) return null;
  if (failure !== null) {
    if (isTenxgraphError(failure, "RUN_ABANDONED_001")) return null;
    const code =
      isTenxgraphError(failure) || failure instanceof RunRefusedError ? failure.code : null;
    const message = failure instanceof Error ? failure.message : String(failure);
    return {
      outcome: { kind: "final", status: "failed", error: { code, message } },
      events: unsent,
    };
  }
  if (unfinished !== null) {
    return { outcome: continuationOutcome(unfinished, controls), events: unsent };
  }
  return { outcome: outcomeOf(ended ?? "completed", controls), events: unsent };
}

/** The run's events, with the chunks of the engine's `modes` when the request records some. */
function runStream(
  graph: CompiledGraph<BaseState>,
  input: RunInput<BaseState>,
  options: RunConfig,
  controls: HostControls,
  modes: readonly ChunkMode[] | undefined,
): AsyncIterable<BackgroundRunEvent> {
  if (!modes?.length) return streamAsHost(graph, input, options, controls);
  const streamMode = ["events", ...modes] as const;
  return withChunks(
    streamAsHost(graph, input, { ...options, streamMode }, controls) as AsyncIterable<
      [string, unknown]
    >,
  );
}

async function* withChunks(
  stream: AsyncIterable<[string, unknown]>,
): AsyncGenerator<BackgroundRunEvent> {
  for await (const [mode, data] of stream)
    yield mode === "events"
      ? (data as StreamEvent)
      : { type: "chunk", mode: mode as ChunkMode, data };
}

/** A run the worker refuses before it writes anything, with the code its `error` carries. */
class RunRefusedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A run runs as the user who queued it, on a thread that user owns or that does not exist yet.
 * A thread another user created after the run was queued is theirs: the run fails and writes
 * nothing, so it neither reads their transcript nor makes itself the owner. Without auth
 * (`userId` null) there are no owners.
 */
function requireRunOwner(run: RunRecord, checkpoint: ThreadCheckpoint | null): void {
  if (run.userId === null || checkpoint === null || checkpoint.userId === run.userId) return;
  throw new RunRefusedError(
    "PERMISSION_DENIED",
    `Thread '${run.threadId}' was created by another user after this run was queued: the run ` +
      `may not run on it (nothing was written); queue it on a thread of your own`,
  );
}

function isNewTurn(input: RunInput<BaseState>): input is Partial<BaseState> {
  return input !== null && !("resume" in input);
}

/** True when the thread was stopped in a node whose tool calls are not all answered. */
async function leftWithUnansweredCalls(
  graph: CompiledGraph<BaseState>,
  threadId: string,
): Promise<boolean> {
  const state = await graph.getState({ threadId });
  if (state?.status !== "stopped" || state.currentNode === null) return false;
  const messages = state.values.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const answered = new Set(
      messages.slice(i + 1).flatMap((m) => (m.role === "tool" ? [m.toolCallId] : [])),
    );
    return (message.toolCalls ?? []).some((call) => !answered.has(call.id));
  }
  return false;
}

/**
 * The continuation of a stopped thread did not finish, so this run's input was not applied: a
 * stop asked of this run ends it as usual; otherwise it fails, saying why and what to do.
 */
function continuationOutcome(status: RunStatus, controls: AttemptControls): AttemptOutcome {
  if (status === "stopped") return outcomeOf(status, controls);
  return {
    kind: "final",
    status: "failed",
    error: {
      code: "THREAD_003",
      message:
        `The thread had been stopped with tool calls unanswered; continuing it first ended ` +
        `'${status}', so this run's input was not applied: settle the thread (answer its ` +
        `interrupt, or continue it), then queue the input again`,
    },
  };
}

function outcomeOf(status: RunStatus, controls: AttemptControls): AttemptOutcome {
  if (status === "completed") return { kind: "final", status: "completed" };
  if (status === "interrupted") return { kind: "final", status: "interrupted" };
  // Stopped: by the worker's drain (back to the queue), or by a stop someone asked for.
  if (controls.drain.signal.aborted && !controls.stop.signal.aborted) {
    return { kind: "requeue", reason: "drain" };
  }
  return {
    kind: "final",
    status: controls.stopReason === "interrupt" ? "interrupted" : "cancelled",
  };
}

/**
 * The version this attempt forks from (a `rollback` run's): the request's, unless an earlier
 * attempt forked already, which the thread having moved past the version the run began from
 * tells (the run before it had ended then: a thread's runs take turns).
 */
function forkVersion(run: RunRecord, checkpoint: ThreadCheckpoint | null): number | undefined {
  const from = run.request.config.fromVersion;
  if (from === undefined || run.attempts <= 1) return from;
  return (checkpoint?.version ?? 0) > (run.baseVersion ?? 0) ? undefined : from;
}

/**
 * The input of this attempt: the request's own for the first, and for a later one (after a
 * crash, a lost host or a drain) whatever the thread still needs. An earlier attempt may have
 * written the input already (its start write), and sending it again would add the user's
 * message twice, so the thread is asked: a message input is written once its first message
 * (id minted at `POST`) is in the transcript; a resume once the thread no longer waits for that
 * answer; an input without messages once the thread moved past the version it began from.
 */
export async function attemptInput(
  graph: CompiledGraph<BaseState>,
  run: RunRecord,
): Promise<RunInput<BaseState>> {
  const { input } = run.request;
  if (input === null || run.attempts <= 1) return input;
  const state = await graph.getState({ threadId: run.threadId });
  if (state === null) return input;
  if ("resume" in input) {
    const waiting = state.status === "interrupted" && state.interrupts.length > 0;
    const wanted = (input as { interruptId?: string }).interruptId;
    const stillPending = waiting && (!wanted || state.interrupts.some((i) => i.id === wanted));
    return stillPending ? input : null;
  }
  const first = (input as Partial<BaseState>).messages?.[0];
  const written = first
    ? state.values.messages.some((m) => m.id === first.id)
    : state.version > (run.baseVersion ?? 0);
  return written ? null : input;
}
