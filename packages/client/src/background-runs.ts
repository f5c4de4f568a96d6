import type { HttpTransport } from "./http-transport.js";
import { ConnectionError, TenxgraphClientError } from "./client-error.js";
import { textLines } from "./ndjson-lines.js";

/** Where a background run stands (`GET /v1/threads/{id}/runs/{run_id}`). */
export type BackgroundRunStatus =
  "pending" | "running" | "interrupted" | "completed" | "failed" | "cancelled";

/** What a new background run does when its thread already has an active run. */
export type MultitaskStrategy = "reject" | "enqueue" | "interrupt";

/** A background run as the server answers it. */
export interface BackgroundRun {
  run_id: string;
  thread_id: string;
  status: BackgroundRunStatus;
  multitask_strategy: MultitaskStrategy;
  /** The worker holding it (`host:pid`), or that held it last. */
  worker_id: string | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  error?: { code: string | null; message: string };
}

/** The answer to `createRun`: the run is queued. */
export interface QueuedRun {
  run_id: string;
  thread_id: string;
  status: "pending";
}

/**
 * One event of a run's stream, numbered from 1 per run. `event.type` is one of the runtime's
 * stream events (`node_start`, `message`, `tool_result`, `tool_in_doubt`, …) or the run's own:
 * `run_attempt`, `run_requeued`, and last `run_status`.
 */
export interface RunStreamEvent {
  id: number;
  event: { type: string; [field: string]: unknown };
}

/** Options of {@link RunEventStream}. */
export interface RunStreamOptions {
  /** Start after this event (what `Last-Event-ID` says); default 0, from the start. */
  lastEventId?: number;
  /** Reconnections after a dropped connection before giving up (default 5). */
  maxReconnects?: number;
  signal?: AbortSignal;
}

const RECONNECT_DELAY_MS = 500;

/**
 * A background run's events, from the start (or after `lastEventId`) and then live, until the
 * run ends (its `run_status` event). A dropped connection is resumed from the last event read,
 * so no event is lost or repeated. Leaving the loop closes the connection; the run goes on.
 */
export class RunEventStream implements AsyncIterable<RunStreamEvent> {
  readonly #transport: HttpTransport;
  readonly #path: string;
  readonly #options: RunStreamOptions;

  constructor(transport: HttpTransport, path: string, options: RunStreamOptions = {}) {
    this.#transport = transport;
    this.#path = path;
    this.#options = options;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<RunStreamEvent> {
    let after = this.#options.lastEventId ?? 0;
    let reconnects = this.#options.maxReconnects ?? 5;
    const outer = this.#options.signal;
    for (;;) {
      const controller = new AbortController();
      const forward = () => controller.abort(outer?.reason);
      if (outer?.aborted) forward();
      outer?.addEventListener("abort", forward, { once: true });
      try {
        const response = await this.#transport.send({
          method: "GET",
          path: `${this.#path}?last_event_id=${after}`,
          accept: "text/event-stream",
          signal: controller.signal,
        });
        for await (const item of sseEvents(response.chunks())) {
          after = item.id;
          yield item;
          if (item.event.type === "run_status") return;
        }
        return; // the server ended the stream: the run had ended before `after`
      } catch (error) {
        if (outer?.aborted) throw outer.reason ?? error;
        // An answer from the server (403, 404, 422) or a malformed stream is final; a dropped
        // connection (no answer, or the body cut off) is resumed after the last event read.
        if (error instanceof TenxgraphClientError && !(error instanceof ConnectionError)) {
          throw error;
        }
        if (reconnects-- <= 0) throw error;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      } finally {
        outer?.removeEventListener("abort", forward);
        controller.abort();
      }
    }
  }

  /** Every event of the run, once it has ended. */
  async toArray(): Promise<RunStreamEvent[]> {
    const events: RunStreamEvent[] = [];
    for await (const event of this) events.push(event);
    return events;
  }
}

/**
 * The numbered events of a Server-Sent Events byte stream (`id:` and `data:` lines, a blank
 * line ending each event; comment lines are keep-alives). An event cut off by the end of the
 * stream is not given. Leaving early cancels the stream (see {@link textLines}).
 */
async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<RunStreamEvent> {
  let lines: string[] = [];
  for await (const line of textLines(body)) {
    if (line !== "") {
      lines.push(line);
      continue;
    }
    const parsed = parseEvent(lines);
    lines = [];
    if (parsed) yield parsed;
  }
}

function parseEvent(lines: readonly string[]): RunStreamEvent | null {
  let id: number | null = null;
  let data = "";
  for (const line of lines) {
    if (line.startsWith("id:")) id = Number(line.slice(3).trim());
    else if (line.startsWith("data:")) data += line.slice(5).trimStart();
  }
  if (id === null || !Number.isSafeInteger(id) || data === "") return null;
  try {
    return { id, event: JSON.parse(data) as RunStreamEvent["event"] };
  } catch (error) {
    throw new TenxgraphClientError({
      code: "INVALID_STREAM",
      status: 0,
      message: `A run event is not JSON: ${(error as Error).message}`,
      cause: error,
    });
  }
}
