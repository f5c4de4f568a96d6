import { ChunkStream } from "./chunk-stream.js";
import { query, thread } from "./api-paths.js";
import {
  RunEventStream,
  type BackgroundRun,
  type MultitaskStrategy,
  type QueuedRun,
  type RunStreamOptions,
} from "./background-runs.js";
import type { GraphInfo, GraphTools, StateJsonSchema } from "./graph-types.js";
import { HttpTransport, type CallOptions, type TokenSource } from "./http-transport.js";
import type { RemoteToolDefinition, SetupResult } from "./remote-tools.js";
import type { CreateCronBody, CreateRunBody, SetupToolsBody, StopBody } from "./request-bodies.js";
import type { Cron, CronDetail, CronOptions, WebhookDelivery } from "./schedules.js";
import { runBody } from "./run-body.js";
import type { InvokeResult, InvokeInput, RunOptions, StopResult } from "./run-types.js";
import { StoreCalls } from "./store-calls.js";
import { ThreadCalls } from "./thread-calls.js";
import type { PageOptions } from "./thread-types.js";

/** Options of {@link TenxgraphClient}. */
export interface TenxgraphClientOptions {
  /** Where the server listens, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`; a function is asked before every request. */
  token?: TokenSource;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Send through this `fetch`. Default: keep-alive `node:http(s)` in Node.js, else the global `fetch`. */
  fetch?: typeof fetch;
}

export type { CallOptions };

/**
 * A typed client for a tenxgraph API server (`tenxgraph api`, or `serve()` from
 * `@tenxgraph/server`). No dependencies: Node.js 20+ (over `node:http`) and browsers (fetch).
 * Answers are the server's JSON as it sends it (snake_case, 10xGraph's wire shapes); failures are
 * thrown as {@link TenxgraphClientError}s with the server's `code`, `status` and `requestId`.
 *
 * @example
 * const client = new TenxgraphClient({ baseUrl: "http://127.0.0.1:8000", token: () => getJwt() });
 * const run = await client.invoke("charge order 4821", { threadId: "order-4821" });
 * if (run.meta.status === "interrupted") {
 *   const [ask] = run.meta.interrupts;
 *   await client.resume("order-4821", { approved: true }, { interruptId: ask.id });
 * }
 * for await (const chunk of client.stream("and the receipt?", { threadId: "order-4821" })) {
 *   if (chunk.event === "message" && !chunk.message?.delta) console.log(chunk.message);
 * }
 */
export class TenxgraphClient extends ThreadCalls {
  readonly #http: HttpTransport;
  /** The long-term store the served graph's nodes and tools use, as the user's items. */
  readonly store: StoreCalls;

  constructor(options: TenxgraphClientOptions) {
    const http = new HttpTransport(options);
    super(http);
    this.#http = http;
    this.store = new StoreCalls(http);
  }

  /** Runs the graph to its end (completed, interrupted or stopped) and answers with the run. */
  invoke(input: InvokeInput, options: RunOptions = {}): Promise<InvokeResult> {
    return this.#http.json({
      method: "POST",
      path: "/v1/graph/invoke",
      body: runBody(input, options),
      signal: options.signal,
    });
  }

  /** Runs the graph and yields its chunks as they come (NDJSON); see {@link ChunkStream}. */
  stream(input: InvokeInput, options: RunOptions = {}): ChunkStream {
    return new ChunkStream(this.#http, runBody(input, options), options.signal);
  }

  /**
   * Answers a pending interrupt of `threadId` and runs on. Name it with `interruptId` (the `id` of
   * one of `meta.interrupts`); without it, the one pending interrupt is answered (several: 422
   * `RESUME_001`).
   */
  resume(
    threadId: string,
    answer: unknown,
    options: Omit<RunOptions, "threadId"> & { interruptId?: string } = {},
  ): Promise<InvokeResult> {
    const { interruptId, ...rest } = options;
    const input = interruptId === undefined ? { resume: answer } : { resume: answer, interruptId };
    return this.invoke(input, { ...rest, threadId });
  }

  /** Continues an unfinished run of `threadId` (crashed, stopped or failed) from its current node. */
  continueRun(threadId: string, options: Omit<RunOptions, "threadId"> = {}): Promise<InvokeResult> {
    return this.invoke({ continue: true }, { ...options, threadId });
  }

  /** Asks the thread's running run to stop (on any server process sharing the store). */
  stop(threadId: string, options: CallOptions = {}): Promise<StopResult> {
    return this.#http.json({
      method: "POST",
      path: "/v1/graph/stop",
      body: { thread_id: threadId } satisfies StopBody,
      signal: options.signal,
    });
  }

  /**
   * Queues a background run on `threadId` (`POST /v1/threads/{id}/runs`): a worker executes it
   * (`tenxgraph worker`). A thread with an active run follows `multitaskStrategy`: `reject`
   * (default, 409 `THREAD_BUSY`), `enqueue` or `interrupt`.
   */
  createRun(
    threadId: string,
    input: InvokeInput,
    options: Omit<RunOptions, "threadId"> & {
      multitaskStrategy?: MultitaskStrategy;
      /** Where the run's end is posted, signed (the server needs `webhooks` configured). */
      webhook?: string;
    } = {},
  ): Promise<QueuedRun> {
    const { multitaskStrategy, webhook, ...rest } = options;
    return this.#http.json({
      method: "POST",
      path: runsPath(threadId),
      body: {
        ...runBody(input, rest),
        ...(multitaskStrategy === undefined ? {} : { multitask_strategy: multitaskStrategy }),
        ...(webhook === undefined ? {} : { webhook }),
      } satisfies CreateRunBody,
      signal: options.signal,
    });
  }

  /** The thread's background runs, newest first. */
  async listRuns(threadId: string, options: PageOptions = {}): Promise<BackgroundRun[]> {
    const data = await this.#http.json<{ runs: BackgroundRun[] }>({
      method: "GET",
      path: `${runsPath(threadId)}${query(options)}`,
      signal: options.signal,
    });
    return data.runs;
  }

  /** One background run. */
  getRun(threadId: string, runId: string, options: CallOptions = {}): Promise<BackgroundRun> {
    return this.#http.json({
      method: "GET",
      path: runsPath(threadId, runId),
      signal: options.signal,
    });
  }

  /** Cancels a background run: at once if queued, at its worker's next heartbeat if running. */
  cancelRun(threadId: string, runId: string, options: CallOptions = {}): Promise<BackgroundRun> {
    return this.#http.json({
      method: "POST",
      path: `${runsPath(threadId, runId)}/cancel`,
      signal: options.signal,
    });
  }

  /** Waits for a background run to end and answers it. */
  joinRun(threadId: string, runId: string, options: CallOptions = {}): Promise<BackgroundRun> {
    return this.#http.json({
      method: "GET",
      path: `${runsPath(threadId, runId)}/join`,
      signal: options.signal,
    });
  }

  /**
   * A background run's events, from the start (or after `lastEventId`) and then live until it
   * ends; a dropped connection resumes after the last event read. See {@link RunEventStream}.
   */
  streamRun(threadId: string, runId: string, options: RunStreamOptions = {}): RunEventStream {
    return new RunEventStream(this.#http, `${runsPath(threadId, runId)}/stream`, options);
  }

  /** A background run's webhook deliveries: state, attempts, the receiver's last answer. */
  async listRunWebhooks(
    threadId: string,
    runId: string,
    options: CallOptions = {},
  ): Promise<WebhookDelivery[]> {
    const data = await this.#http.json<{ deliveries: WebhookDelivery[] }>({
      method: "GET",
      path: `${runsPath(threadId, runId)}/webhooks`,
      signal: options.signal,
    });
    return data.deliveries;
  }

  /**
   * Schedules a background run of `input` on a cron (`POST /v1/crons`): on `threadId`, or on a
   * fresh thread per tick. Ticks missed while the server was down run once.
   */
  createCron(input: InvokeInput, options: CronOptions): Promise<Cron> {
    const { schedule, timezone, threadId, multitaskStrategy, webhook, signal } = options;
    return this.#http.json({
      method: "POST",
      path: "/v1/crons",
      body: {
        ...runBody(input),
        schedule,
        ...(timezone === undefined ? {} : { timezone }),
        ...(threadId === undefined ? {} : { thread_id: threadId }),
        ...(multitaskStrategy === undefined ? {} : { multitask_strategy: multitaskStrategy }),
        ...(webhook === undefined ? {} : { webhook }),
      } satisfies CreateCronBody,
      signal,
    });
  }

  /** The caller's schedules, newest first. */
  async listCrons(options: PageOptions = {}): Promise<Cron[]> {
    const data = await this.#http.json<{ crons: Cron[] }>({
      method: "GET",
      path: `/v1/crons${query(options)}`,
      signal: options.signal,
    });
    return data.crons;
  }

  /** One schedule with its latest ticks and their runs. */
  getCron(cronId: string, options: CallOptions = {}): Promise<CronDetail> {
    return this.#http.json({
      method: "GET",
      path: `/v1/crons/${encodeURIComponent(cronId)}`,
      signal: options.signal,
    });
  }

  /** Deletes a schedule; runs it already queued stay. */
  async deleteCron(cronId: string, options: CallOptions = {}): Promise<void> {
    await this.#http.json({
      method: "DELETE",
      path: `/v1/crons/${encodeURIComponent(cronId)}`,
      signal: options.signal,
    });
  }

  /** `"pong"` when the server is up (no auth needed). */
  ping(options: CallOptions = {}): Promise<"pong"> {
    return this.#http.json({ method: "GET", path: "/ping", signal: options.signal });
  }

  /** The served graph's nodes, edges and capabilities. */
  getGraph(options: CallOptions = {}): Promise<GraphInfo> {
    return this.#http.json({ method: "GET", path: "/v1/graph", signal: options.signal });
  }

  /** The graph's tools with their argument schemas. */
  getGraphTools(options: CallOptions = {}): Promise<GraphTools> {
    return this.#http.json({ method: "GET", path: "/v1/graph/tools", signal: options.signal });
  }

  /**
   * Attaches tools this client runs to ToolNodes of the served graph, for every later run (the
   * server refuses with 403 when it has auth or `MODE=production`: then pass them per run in
   * `config.remote_tools`). A call pauses the run; find it with `remoteToolCalls(messages)` and
   * answer with `toolResult(id, output)` as the next input on the same thread.
   */
  setupRemoteTools(
    tools: readonly RemoteToolDefinition[],
    options: CallOptions = {},
  ): Promise<SetupResult> {
    return this.#http.json({
      method: "POST",
      path: "/v1/graph/setup",
      body: {
        tools: tools.map((t) => ({
          node_name: t.nodeName,
          name: t.name,
          description: t.description ?? "",
          parameters: t.parameters ?? {},
        })),
      } satisfies SetupToolsBody,
      signal: options.signal,
    });
  }

  /** A JSON Schema of the graph's state. */
  getStateSchema(options: CallOptions = {}): Promise<StateJsonSchema> {
    return this.#http.json({
      method: "GET",
      path: "/v1/graph:StateSchema",
      signal: options.signal,
    });
  }

  /** The server's OpenAPI 3.1 document (no auth needed). */
  getOpenApi(options: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.#http.raw({ method: "GET", path: "/openapi.json", signal: options.signal });
  }
}

/** The thread's runs, or one of them. */
function runsPath(threadId: string, runId?: string): string {
  const runs = `${thread(threadId)}/runs`;
  return runId === undefined ? runs : `${runs}/${encodeURIComponent(runId)}`;
}
