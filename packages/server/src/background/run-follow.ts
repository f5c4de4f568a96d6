import { ApiError } from "../http/api-error.js";
import type { RunService } from "./runs-context.js";
import { FINAL_RUN_STATUSES, type RunRecord, type StoredRunEvent } from "./run-record.js";

/** How a stored event goes out: its SSE frames, none to leave it out. */
export type RunEventFrames = (stored: StoredRunEvent) => string[];

/** `/v1`'s frame: the event as it is, numbered by its position in the run. */
const v1Frames: RunEventFrames = ({ seq, event }) => [
  `id: ${seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
];

/** How long a stream or join sleeps between reads when no notification wakes it. */
const FALLBACK_WAKE_MS = 1000;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

/** Waits for `run` to end (or `signal` to abort) and returns it as it then stands. */
export async function joinRun(
  runs: RunService,
  run: RunRecord,
  signal: AbortSignal,
): Promise<RunRecord> {
  while (!FINAL_RUN_STATUSES.includes(run.status) && !signal.aborted) {
    await runs.follower.wait(run.runId, FALLBACK_WAKE_MS, signal);
    const now = await runs.store.getRun(run.runId);
    if (!now)
      throw new ApiError(404, "NOT_FOUND", `Run '${run.runId}' was deleted with its thread`);
    run = now;
  }
  return run;
}

/**
 * Sends the run's events after `after` as SSE frames, then live ones as the run's worker
 * writes them, until its last (`run_status`) or `gone` aborts; a comment keeps an idle stream open.
 */
export async function sendRunEvents(
  runs: RunService,
  run: RunRecord,
  after: number,
  send: (text: string) => Promise<void>,
  gone: AbortSignal,
  /** Another API's framing (LangGraph's); default `/v1`'s. */
  frames: RunEventFrames = v1Frames,
): Promise<void> {
  let seen = after;
  let lastSentAt = Date.now();
  for (;;) {
    const batch = await runs.store.readEvents(run.runId, seen);
    for (const stored of batch) {
      const { seq, event } = stored;
      for (const text of frames(stored)) await send(text);
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
}
