import type { RemoteToolDefinition, SetupResult } from "./remote-tools.js";
import { ChunkStream } from "./chunk-stream.js";
import type { GraphInfo, GraphTools, StateJsonSchema } from "./graph-types.js";
import { HttpTransport, type TokenSource } from "./http-transport.js";
import type {
  InDoubtCall,
  InDoubtDecision,
  InDoubtDecisionResult,
  LedgerEntry,
} from "./ledger-types.js";
import {
  RunEventStream,
  type BackgroundRun,
  type MultitaskStrategy,
  type QueuedRun,
  type RunStreamOptions,
} from "./background-runs.js";
import { runBody } from "./run-body.js";
import type { InvokeResult, InvokeInput, RunOptions, StopResult } from "./run-types.js";
import type {
  AddMessagesResult,
  ClearStateResult,
  DeleteThreadResult,
  PageOptions,
  StateEdit,
  StateHistoryEntry,
  ThreadInfo,
} from "./thread-types.js";
import { userMessage, type MessageInput, type WireMessage } from "./wire-message.js";
import type { WireState } from "./wire-state.js";

/** Options of {@link TenxgraphClient}. */
export interface TenxgraphClientOptions {
  /** Where the server listens, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`; a function is asked before every request. */
  token?: TokenSource;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
}

/** Per-request options: an `AbortSignal`. */
export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * A typed client for a tenxgraph API server (`tenxgraph api`, or `serve()` from
 * `@tenxgraph/server`). fetch only, no dependencies: Node.js 20+ and browsers. Answers are the
 * server's JSON as it sends it (snake_case, 10xGraph's wire shapes); failures are thrown as
 * {@link TenxgraphClientError}s with the server's `code`, `status` and `requestId`.
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
export class TenxgraphClient {
  readonly #http: HttpTransport;

  constructor(options: TenxgraphClientOptions) {
    this.#http = new HttpTransport(options);
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
      body: { thread_id: threadId },
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
    options: Omit<RunOptions, "threadId"> & { multitaskStrategy?: MultitaskStrategy } = {},
  ): Promise<QueuedRun> {
    const { multitaskStrategy, ...rest } = options;
    return this.#http.json({
      method: "POST",
      path: runsPath(threadId),
      body: {
        ...runBody(input, rest),
        ...(multitaskStrategy === undefined ? {} : { multitask_strategy: multitaskStrategy }),
      },
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

  /**
   * The caller's threads (all threads when the server runs without auth), a subgraph's child
   * threads left out: they are deleted with their parent.
   */
  async listThreads(options: PageOptions = {}): Promise<ThreadInfo[]> {
    const data = await this.#http.json<{ threads: ThreadInfo[] }>({
      method: "GET",
      path: `/v1/threads${query(options)}`,
      signal: options.signal,
    });
    return data.threads;
  }

  /**
   * The thread's child threads: those its subgraph nodes ran on, each with its own transcript and
   * tool ledger, paged as {@link listThreads}. `NotFoundError` for an unknown thread.
   */
  async listChildThreads(threadId: string, options: PageOptions = {}): Promise<ThreadInfo[]> {
    const data = await this.#http.json<{ threads: ThreadInfo[] }>({
      method: "GET",
      path: `${thread(threadId)}/children${query(options)}`,
      signal: options.signal,
    });
    return data.threads;
  }

  /** A thread, or `null` when it does not exist. */
  async getThread(threadId: string, options: CallOptions = {}): Promise<ThreadInfo | null> {
    const data = await this.#http.json<{ thread_data: { thread: ThreadInfo | null } }>({
      method: "GET",
      path: thread(threadId),
      signal: options.signal,
    });
    return data.thread_data.thread;
  }

  /** Deletes a thread: its state, messages and ledger. */
  deleteThread(threadId: string, options: CallOptions = {}): Promise<DeleteThreadResult> {
    return this.#http.json({ method: "DELETE", path: thread(threadId), signal: options.signal });
  }

  /**
   * The thread's state (or, with `version`, that past version's), or `null` when the thread
   * does not exist. A version it does not keep is a 404 `VERSION_NOT_FOUND`.
   */
  async getState(
    threadId: string,
    options: CallOptions & { version?: number } = {},
  ): Promise<WireState | null> {
    const version = options.version === undefined ? "" : `?version=${options.version}`;
    const data = await this.#http.json<{ state: WireState | null }>({
      method: "GET",
      path: `${thread(threadId)}/state${version}`,
      signal: options.signal,
    });
    return data.state;
  }

  /** The thread's versions, newest first: `limit` of them (server default 100), older than `before`. */
  async getStateHistory(
    threadId: string,
    options: CallOptions & { limit?: number; before?: number } = {},
  ): Promise<StateHistoryEntry[]> {
    const params = new URLSearchParams();
    if (options.limit !== undefined) params.set("limit", String(options.limit));
    if (options.before !== undefined) params.set("before", String(options.before));
    const search = params.size > 0 ? `?${params}` : "";
    const data = await this.#http.json<{ history: StateHistoryEntry[] }>({
      method: "GET",
      path: `${thread(threadId)}/history${search}`,
      signal: options.signal,
    });
    return data.history;
  }

  /**
   * Writes `edit` as the thread's next version through the graph's reducers (the server's
   * `updateState`); with `asNode`, as that node's output, so a continuation runs the node after
   * it. Answers the new version and its state; a run writing meanwhile makes it a 409.
   */
  async editState(
    threadId: string,
    edit: StateEdit,
    options: CallOptions = {},
  ): Promise<{ version: number; state: WireState }> {
    return this.#http.json({
      method: "POST",
      path: `${thread(threadId)}/state/update`,
      body: {
        ...(edit.values === undefined ? {} : { values: edit.values }),
        messages: edit.messages ?? [],
        remove_message_ids: edit.removeMessageIds ?? [],
        ...(edit.asNode === undefined ? {} : { as_node: edit.asNode }),
      },
      signal: options.signal,
    });
  }

  /** Deletes all but the newest `keepLast` versions; answers how many went. */
  async pruneHistory(
    threadId: string,
    keepLast: number,
    options: CallOptions = {},
  ): Promise<number> {
    const data = await this.#http.json<{ deleted_versions: number }>({
      method: "POST",
      path: `${thread(threadId)}/history/prune`,
      body: { keep_last: keepLast },
      signal: options.signal,
    });
    return data.deleted_versions;
  }

  /** Deletes the thread after `at` (`null`: never), when the server's store sweeps. */
  async setDeleteAfter(
    threadId: string,
    at: Date | null,
    options: CallOptions = {},
  ): Promise<void> {
    await this.#http.json({
      method: "PUT",
      path: `${thread(threadId)}/delete-after`,
      body: { delete_after: at === null ? null : at.toISOString() },
      signal: options.signal,
    });
  }

  /**
   * Merges `state` into the thread's state as a new version (objects merge, `null` never
   * overwrites, messages under `context` are appended). A run committing at the same time makes
   * one of the two fail with a 409 `STORAGE_CONFLICT_001`.
   */
  async updateState(
    threadId: string,
    state: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<WireState> {
    const data = await this.#http.json<{ state: WireState }>({
      method: "PUT",
      path: `${thread(threadId)}/state`,
      body: { state },
      signal: options.signal,
    });
    return data.state;
  }

  /** Resets the thread's state fields and run position; its messages stay. */
  clearState(threadId: string, options: CallOptions = {}): Promise<ClearStateResult> {
    return this.#http.json({
      method: "DELETE",
      path: `${thread(threadId)}/state`,
      signal: options.signal,
    });
  }

  /** A page of the thread's transcript, oldest first. */
  async listMessages(threadId: string, options: PageOptions = {}): Promise<WireMessage[]> {
    const data = await this.#http.json<{ messages: WireMessage[] }>({
      method: "GET",
      path: `${thread(threadId)}/messages${query(options)}`,
      signal: options.signal,
    });
    return data.messages;
  }

  /** One message of the thread (404 when there is none with that id). */
  getMessage(threadId: string, messageId: string, options: CallOptions = {}): Promise<WireMessage> {
    return this.#http.json({
      method: "GET",
      path: `${thread(threadId)}/messages/${encodeURIComponent(messageId)}`,
      signal: options.signal,
    });
  }

  /** Appends messages to the transcript (a string is a user message), creating the thread if needed. */
  addMessages(
    threadId: string,
    messages: string | MessageInput | MessageInput[],
    options: CallOptions & { metadata?: Record<string, unknown> } = {},
  ): Promise<AddMessagesResult> {
    const list =
      typeof messages === "string"
        ? [userMessage(messages)]
        : Array.isArray(messages)
          ? messages
          : [messages];
    return this.#http.json({
      method: "POST",
      path: `${thread(threadId)}/messages`,
      body: { messages: list, ...(options.metadata ? { metadata: options.metadata } : {}) },
      signal: options.signal,
    });
  }

  /**
   * Removes one message from the thread, as a new version: the versions before keep it, and
   * the ledger keeps its calls. 404 when the thread's transcript has no such message.
   */
  deleteMessage(
    threadId: string,
    messageId: string,
    options: CallOptions = {},
  ): Promise<{ success: true; message: string }> {
    return this.#http.json({
      method: "DELETE",
      path: `${thread(threadId)}/messages/${encodeURIComponent(messageId)}`,
      signal: options.signal,
    });
  }

  /** The thread's tool ledger: every call claimed, with its status, attempt and result. */
  async getLedger(threadId: string, options: CallOptions = {}): Promise<LedgerEntry[]> {
    const data = await this.#http.json<{ entries: LedgerEntry[] }>({
      method: "GET",
      path: `${thread(threadId)}/ledger`,
      signal: options.signal,
    });
    return data.entries;
  }

  /** Calls of the thread that started and were never recorded: they may or may not have happened. */
  async listInDoubt(threadId: string, options: CallOptions = {}): Promise<InDoubtCall[]> {
    const data = await this.#http.json<{ calls: InDoubtCall[] }>({
      method: "GET",
      path: `${thread(threadId)}/in-doubt`,
      signal: options.signal,
    });
    return data.calls;
  }

  /**
   * Decides an in-doubt call that waits for one (`decidable`): retry it, fail it, or record the
   * result it had. The run then goes on; the answer is that run.
   */
  decideInDoubt(
    threadId: string,
    key: string,
    decision: InDoubtDecision,
    options: CallOptions = {},
  ): Promise<InDoubtDecisionResult> {
    return this.#http.json({
      method: "POST",
      path: `${thread(threadId)}/in-doubt/${encodeURIComponent(key)}`,
      body: decision,
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
      },
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

function thread(threadId: string): string {
  return `/v1/threads/${encodeURIComponent(threadId)}`;
}

/** The thread's runs, or one of them. */
function runsPath(threadId: string, runId?: string): string {
  const runs = `${thread(threadId)}/runs`;
  return runId === undefined ? runs : `${runs}/${encodeURIComponent(runId)}`;
}

/** `?search=…&offset=…&limit=…` with only the options that are set. */
function query(options: PageOptions): string {
  const params = new URLSearchParams();
  if (options.search) params.set("search", options.search);
  if (options.offset !== undefined) params.set("offset", String(options.offset));
  if (options.limit !== undefined) params.set("limit", String(options.limit));
  const text = params.toString();
  return text ? `?${text}` : "";
}
