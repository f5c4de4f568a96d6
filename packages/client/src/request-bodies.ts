import type { MultitaskStrategy } from "./background-runs.js";
import type { GraphInputBody } from "./run-body.js";
import type { MessageInput } from "./wire-message.js";

// The JSON bodies this client sends, one type per route: the server checks at compile time
// that its request schemas accept every one of them (packages/server/src/wire/wire-contract.ts).

/** `POST /v1/graph/stop`. */
export interface StopBody {
  thread_id: string;
}

/** `POST /v1/graph/setup`: tools this client runs, per ToolNode. */
export interface SetupToolsBody {
  tools: {
    node_name: string;
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  }[];
}

/** `POST /v1/threads/{id}/runs`: a run's body, and what to do when the thread is busy. */
export interface CreateRunBody extends GraphInputBody {
  multitask_strategy?: MultitaskStrategy;
  /** Where the run's end is posted, signed (the server needs `webhooks` configured). */
  webhook?: string;
}

/** `POST /v1/crons`: a schedule and the run body each tick queues. */
export interface CreateCronBody extends CreateRunBody {
  schedule: string;
  timezone?: string;
  thread_id?: string | null;
}

/** `PUT /v1/threads/{id}/state`: fields merged into the state, messages under `context`. */
export interface PutStateBody {
  state: Record<string, unknown>;
}

/** `POST /v1/threads/{id}/messages`. */
export interface AddMessagesBody {
  messages: MessageInput[];
  metadata?: Record<string, unknown>;
}

/** `POST /v1/threads/{id}/state/update`: an update through the graph's reducers. */
export interface UpdateStateBody {
  values?: Record<string, unknown>;
  messages: MessageInput[];
  remove_message_ids: string[];
  as_node?: string;
}

/** `POST /v1/threads/{id}/history/prune`. */
export interface PruneHistoryBody {
  keep_last: number;
}

/** `PUT /v1/threads/{id}/delete-after`: an ISO-8601 time, or `null` to keep the thread. */
export interface DeleteAfterBody {
  delete_after: string | null;
}
