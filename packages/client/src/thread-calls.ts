import { query, thread } from "./api-paths.js";
import type { CallOptions, HttpTransport } from "./http-transport.js";
import type {
  InDoubtCall,
  InDoubtDecision,
  InDoubtDecisionResult,
  LedgerEntry,
} from "./ledger-types.js";
import type {
  AddMessagesBody,
  DeleteAfterBody,
  PruneHistoryBody,
  PutStateBody,
  UpdateStateBody,
} from "./request-bodies.js";
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

/**
 * The calls on threads that `TenxgraphClient` has: threads, state, history, messages, the tool
 * ledger and in-doubt decisions (its base class, so neither file grows past a screenful of pages).
 */
export class ThreadCalls {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
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
      } satisfies UpdateStateBody,
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
      body: { keep_last: keepLast } satisfies PruneHistoryBody,
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
      body: { delete_after: at === null ? null : at.toISOString() } satisfies DeleteAfterBody,
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
      body: { state } satisfies PutStateBody,
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
      body: {
        messages: list,
        ...(options.metadata ? { metadata: options.metadata } : {}),
      } satisfies AddMessagesBody,
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
}
