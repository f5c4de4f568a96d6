import { z } from "zod";

/**
 * What the API answers, as zod schemas: `/openapi.json` documents them, and
 * `wire-contract.ts` checks each against the client's wire type, so a server answer, its
 * document and the client's type cannot drift apart. They are never run on a live answer
 * (speed); `app/response-schemas.test.ts` checks a few real answers against them.
 */

const contentBlock = z.looseObject({ type: z.string() });

const wireToolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const messageRole = z.enum(["user", "assistant", "system", "tool"]);

export const wireMessageResponse = z.object({
  message_id: z.string(),
  role: messageRole,
  content: z.array(contentBlock),
  delta: z.boolean(),
  tools_calls: z.array(wireToolCall).nullable(),
  reasoning: z.string().nullable(),
  timestamp: z.number(),
  metadata: z.record(z.string(), z.unknown()),
  usages: z.record(z.string(), z.number()).nullable(),
  raw: z.null(),
  parsed_content: z.null(),
});

const interrupt = z.object({
  id: z.string(),
  value: z.unknown(),
  message: z.string().optional(),
  node: z.string(),
  toolCallId: z.string().optional(),
  /** When a durable timer resumes the thread (ISO 8601): `ctx.sleep`, `interrupt(v, { resumeAt })`. */
  resumeAt: z.string().optional(),
});

const threadStatus = z.enum(["running", "completed", "interrupted", "stopped", "failed"]);

const executionMeta = z.object({
  current_node: z.string(),
  step: z.number(),
  status: z.enum(["running", "interrupted_before", "interrupted_after", "completed", "error"]),
  interrupted_node: z.array(z.string()).nullable(),
  interrupt_reason: z.string().nullable(),
  interrupt_data: z.object({ interrupts: z.array(interrupt) }).nullable(),
  thread_id: z.string(),
  stop_current_execution: z.enum(["none", "stop_requested", "stopped"]),
  internal_data: z.object({
    status: threadStatus,
    version: z.number(),
    interrupts: z.array(interrupt),
  }),
});

/** A thread's state: the transcript, the execution's meta, and the graph's own fields. */
export const wireStateResponse = z.looseObject({
  context: z.array(wireMessageResponse),
  context_summary: z.string().nullable(),
  execution_meta: executionMeta,
});

export const threadInfoResponse = z.object({
  thread_id: z.string(),
  thread_name: z.string().nullable(),
  user_id: z.string().nullable(),
  parent_thread_id: z.string().nullable(),
  metadata: z.object({ status: threadStatus, version: z.number() }),
  updated_at: z.string().nullable(),
  run_id: z.string().nullable(),
});

export const historyEntryResponse = z.object({
  version: z.number(),
  parent_version: z.number().nullable(),
  step: z.number(),
  node: z.string().nullable(),
  next_node: z.string().nullable(),
  status: threadStatus,
  run_id: z.string().nullable(),
  created_at: z.string(),
  values: z.record(z.string(), z.unknown()),
  message_count: z.number(),
  interrupts: z.array(z.unknown()),
  trace_id: z.string().nullable(),
});

export const ledgerEntryResponse = z.object({
  key: z.string(),
  tool_name: z.string(),
  status: z.enum(["started", "completed", "interrupted"]),
  attempt: z.number(),
  owner_run_id: z.string().nullable(),
  started_at: z.string(),
  result: z.unknown().optional(),
  completed_at: z.string().nullable().optional(),
  heartbeat_at: z.string().nullable().optional(),
  lease_expires_at: z.string().nullable().optional(),
  lease_expires_in_ms: z.number().nullable().optional(),
});

export const inDoubtCallResponse = z.object({
  key: z.string(),
  tool_name: z.string(),
  arguments: z.unknown().optional(),
  attempt: z.number(),
  interrupt_id: z.string().nullable(),
  decidable: z.boolean(),
  status: z.literal("started").optional(),
  owner_run_id: z.string().nullable().optional(),
  started_at: z.string().optional(),
  heartbeat_at: z.string().nullable().optional(),
  lease_expires_at: z.string().nullable().optional(),
  lease_expires_in_ms: z.number().nullable().optional(),
});

const runMeta = z.object({
  thread_id: z.string(),
  is_new_thread: z.boolean(),
  run_id: z.string(),
  status: z.enum(["completed", "interrupted", "stopped"]),
  version: z.number(),
  interrupts: z.array(interrupt),
  thread_name: z.string().optional(),
});

export const invokeResultResponse = z.object({
  messages: z.array(wireMessageResponse),
  meta: runMeta,
  context: z.array(wireMessageResponse).optional(),
  summary: z.string().nullable().optional(),
  state: wireStateResponse.nullable().optional(),
});

export const inDoubtDecisionResponse = z.object({
  messages: z.array(wireMessageResponse),
  meta: runMeta.omit({ is_new_thread: true, thread_name: true }),
});

export const stopResultResponse = z.object({
  ok: z.boolean(),
  running: z.boolean(),
  reason: z.enum(["no-state", "not-running"]).optional(),
  success: z.boolean(),
  message: z.string(),
  thread_id: z.string(),
  status: z.enum(["stop_requested", "not_running", "no_state"]),
});

/** One line of `POST /v1/graph/stream` (NDJSON), or one SSE event's data. */
export const streamChunkResponse = z.object({
  event: z.enum(["message", "updates", "state", "error"]),
  message: wireMessageResponse.nullable(),
  state: wireStateResponse.nullable(),
  data: z.record(z.string(), z.unknown()).nullable(),
  thread_id: z.string().nullable(),
  run_id: z.string().nullable(),
  metadata: z.looseObject({
    thread_id: z.string().optional(),
    is_new_thread: z.boolean().optional(),
  }),
  timestamp: z.number(),
});

/** `{ success: true, message, data }`: what a delete or a clear answers. */
export function doneResponse<Data extends z.ZodType>(data: Data) {
  return z.object({ success: z.literal(true), message: z.string(), data });
}

export const graphInfoResponse = z.object({
  info: z.object({
    node_count: z.number(),
    edge_count: z.number(),
    checkpointer: z.boolean(),
    checkpointer_type: z.string().nullable(),
    publisher: z.boolean(),
    store: z.boolean(),
    interrupt_before: z.array(z.string()).nullable(),
    interrupt_after: z.array(z.string()).nullable(),
    context_type: z.string().nullable(),
    id_generator: z.string().nullable(),
    id_type: z.string().nullable(),
    state_type: z.string().nullable(),
    state_fields: z.array(z.string()).nullable(),
    is_realtime: z.boolean(),
  }),
  nodes: z.array(z.object({ id: z.string(), name: z.string() })),
  edges: z.array(z.object({ id: z.string(), source: z.string(), target: z.string() })),
});

export const graphToolsResponse = z.object({
  node_count: z.number(),
  tool_count: z.number(),
  nodes: z.array(
    z.object({
      node_name: z.string(),
      tool_count: z.number(),
      tools: z.array(
        z.object({
          name: z.string(),
          description: z.string(),
          source: z.string(),
          parameters: z.unknown(),
        }),
      ),
    }),
  ),
});

export const stateJsonSchemaResponse = z.object({
  title: z.string(),
  type: z.literal("object"),
  properties: z.record(z.string(), z.unknown()),
});

export const setupResultResponse = z.object({
  status: z.literal("success"),
  success: z.literal(true),
  message: z.string(),
  details: z.string(),
  registered_tools: z.array(z.object({ node_name: z.string(), name: z.string() })),
});

const backgroundRunStatus = z.enum([
  "pending",
  "running",
  "interrupted",
  "completed",
  "failed",
  "cancelled",
]);

export const backgroundRunResponse = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  status: backgroundRunStatus,
  multitask_strategy: z.enum(["reject", "enqueue", "interrupt"]),
  worker_id: z.string().nullable(),
  attempts: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  error: z.object({ code: z.string().nullable(), message: z.string() }).optional(),
});

export const queuedRunResponse = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  status: z.literal("pending"),
});

/** The data of one SSE event of a background run's stream (its `id:` line numbers it). */
export const runEventResponse = z.looseObject({ type: z.string() });

// What each route's envelope carries as `data`, built of the types above.

export const threadListResponse = z.object({ threads: z.array(threadInfoResponse) });
export const threadDataResponse = z.object({
  thread_data: z.object({ thread: threadInfoResponse.nullable() }),
});
export const threadDeletedResponse = doneResponse(z.object({ thread_id: z.string() }));
export const stateResponse = z.object({ state: wireStateResponse.nullable() });
export const versionDoneResponse = doneResponse(z.object({ version: z.number() }));
export const historyResponse = z.object({ history: z.array(historyEntryResponse) });
export const stateUpdateResponse = z.object({
  version: z.number(),
  state: wireStateResponse.nullable(),
});
export const pruneResponse = z.object({ deleted_versions: z.number() });
export const deleteAfterResponse = z.object({
  thread_id: z.string(),
  delete_after: z.string().nullable(),
});
export const messageListResponse = z.object({ messages: z.array(wireMessageResponse) });
export const messagesAddedResponse = doneResponse(
  z.object({ version: z.number(), message_ids: z.array(z.string()) }),
);
export const ledgerResponse = z.object({ entries: z.array(ledgerEntryResponse) });
export const inDoubtListResponse = z.object({ calls: z.array(inDoubtCallResponse) });
export const runListResponse = z.object({ runs: z.array(backgroundRunResponse) });
export const webhookDeliveryListResponse = z.object({
  deliveries: z.array(
    z.object({
      event_id: z.string(),
      type: z.string(),
      url: z.string(),
      state: z.enum(["pending", "delivered", "failed"]),
      attempts: z.number(),
      last_status: z.number().nullable(),
      last_error: z.string().nullable(),
      next_attempt_at: z.string().nullable(),
      delivered_at: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
});
export const fixResponse = z.object({
  success: z.literal(false),
  message: z.string(),
  removed_count: z.number(),
  state: z.null(),
});
export const observabilityResponse = z.object({
  thread_id: z.string(),
  run_count: z.number(),
  run_ids: z.array(z.string()),
  run: z.null(),
});

export const cronResponse = z.object({
  cron_id: z.string(),
  schedule: z.string(),
  timezone: z.string(),
  thread_id: z.string().nullable(),
  multitask_strategy: z.enum(["reject", "enqueue", "interrupt"]),
  next_run_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const cronDetailResponse = cronResponse.extend({
  ticks: z.array(
    z.object({
      tick_at: z.string(),
      run_id: z.string(),
      thread_id: z.string(),
      queued: z.boolean(),
      error: z.object({ code: z.string(), message: z.string() }).nullable(),
    }),
  ),
});
export const cronListResponse = z.object({ crons: z.array(cronResponse) });
export const cronDeletedResponse = doneResponse(z.object({ cron_id: z.string() }));
