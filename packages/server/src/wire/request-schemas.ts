import { z } from "zod";
import { validationError } from "../http/api-error.js";
import { remoteToolConfigSchema } from "./wire-remote-tools.js";
import { bodyIdSchema, idProblem } from "../http/request-limits.js";
import { wireMessageSchema, type WireMessageInput } from "./wire-message.js";

/** A JSON object (`config`, `options`, `metadata`, …). */
const jsonObject = z.record(z.string(), z.unknown());

/**
 * `POST /v1/graph/invoke` and `/v1/graph/stream`. Beyond 10xGraph: `resume` + `interrupt_id`
 * answer a pending interrupt, `continue: true` picks up an unfinished run (after a crash or a
 * stop); then `messages` may be empty.
 */
export const graphInputSchema = z
  .object({
    messages: z.array(wireMessageSchema).default([]),
    initial_state: jsonObject.nullable().optional(),
    config: jsonObject.nullable().optional(),
    recursion_limit: z.number().int().min(1).max(100).default(25),
    response_granularity: z.enum(["low", "partial", "full"]).default("low"),
    resume: z.unknown().optional(),
    interrupt_id: z.string().min(1).optional(),
    continue: z.boolean().optional(),
  })
  .superRefine((input, ctx) => {
    const answering = input.resume !== undefined || input.continue === true;
    if (!answering && input.messages.length === 0) {
      ctx.addIssue({ code: "custom", path: ["messages"], message: "messages must not be empty" });
    }
    if (input.resume !== undefined && input.continue === true) {
      ctx.addIssue({
        code: "custom",
        path: ["continue"],
        message: "give either resume or continue, not both",
      });
    }
  });
/** A validated invoke/stream body. */
export type GraphInput = z.infer<typeof graphInputSchema>;

/** `POST /v1/threads/{thread_id}/runs`: the invoke body, plus what to do on a busy thread. */
export const createRunSchema = z.intersection(
  graphInputSchema,
  z.object({
    multitask_strategy: z.enum(["reject", "enqueue", "interrupt"]).default("reject"),
    /** Where the run's end is posted, signed (see docs/timers-schedules-webhooks.md). */
    webhook: z.string().min(1).optional(),
  }),
);

/**
 * `POST /v1/crons`: a schedule and the run body each tick queues (that of `POST T/runs`), on
 * `thread_id`, or on a fresh thread per tick when it is null or absent.
 */
export const createCronSchema = z.intersection(
  createRunSchema,
  z.object({
    schedule: z.string().trim().min(1, "schedule must not be blank"),
    timezone: z.string().trim().min(1).default("UTC"),
    thread_id: z
      .string()
      .min(1, "thread_id must not be blank")
      .pipe(bodyIdSchema)
      .nullable()
      .default(null),
  }),
);

/** Run options a client may set in `config` (others are ignored). */
export const runConfigSchema = z.looseObject({
  thread_id: z.union([z.string(), z.number()]).nullable().optional(),
  node_timeout: z.number().nullable().optional(),
  tool_timeout: z.number().nullable().optional(),
  durable_checkpoint_every_step: z.boolean().optional(),
  /** Fork: run from this past version of the thread (core's `fromVersion`). */
  from_version: z.number().int().min(1).optional(),
  /** Tools the client runs, for this run (contract §6). */
  remote_tools: z.array(remoteToolConfigSchema).nullable().optional(),
});

/** `POST /v1/graph/stop`. */
export const stopInputSchema = z.object({
  thread_id: z
    .string()
    .trim()
    .min(1, "thread_id must not be blank")
    .superRefine((id, ctx) => {
      const problem = idProblem(id);
      if (problem !== null) ctx.addIssue({ code: "custom", message: `thread_id ${problem}` });
    }),
  config: jsonObject.nullable().optional(),
});

/** `POST /v1/graph/setup`. */
export const setupInputSchema = z.object({
  tools: z
    .array(
      z.object({
        node_name: z.string().min(1),
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "1-64 letters, digits, '_' or '-'"),
        description: z.string().default(""),
        parameters: jsonObject.default({}),
      }),
    )
    .min(1, "tools must not be empty"),
});

/** `GET /v1/threads` and `…/messages` query. */
export const pageQuerySchema = z.object({
  search: z.string().optional(),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** `GET /v1/threads/{id}/history`: newest first, `before` a version. */
export const historyQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  before: z.coerce.number().int().min(1).optional(),
});

/** `GET /v1/threads/{id}/state`: the latest version, or `version`. */
export const stateQuerySchema = z.object({
  version: z.coerce.number().int().min(1).optional(),
});

/** `POST /v1/threads/{id}/state/update`: core's `updateState`. */
export const updateStateSchema = z.object({
  values: jsonObject.optional(),
  messages: z.array(wireMessageSchema).default([]),
  remove_message_ids: z.array(bodyIdSchema.min(1)).default([]),
  as_node: z.string().min(1).optional(),
});

/** A validated `POST /v1/threads/{id}/state/update` body. */
export type UpdateStateBody = z.infer<typeof updateStateSchema>;

/** `POST /v1/threads/{id}/history/prune`. */
export const pruneHistorySchema = z.object({ keep_last: z.number().int().min(1) });

/** `PUT /v1/threads/{id}/delete-after`: an ISO-8601 time, or `null` to keep the thread. */
export const deleteAfterSchema = z.object({
  delete_after: z.iso.datetime({ offset: true }).nullable(),
});

/** Bodies that carry only an optional `config` (deletes). */
export const configBodySchema = z.object({ config: jsonObject.nullable().optional() }).loose();

/**
 * `PUT /v1/threads/{id}/state`. `context` is checked by {@link wireMessagesOf}; the summary is
 * text (`null` leaves it as it is).
 */
export const putStateSchema = z.object({
  config: jsonObject.nullable().optional(),
  state: z.looseObject({ context_summary: z.string().nullable().optional() }),
});

/** `POST /v1/threads/{id}/messages`. */
export const putMessagesSchema = z.object({
  config: jsonObject.nullable().optional(),
  messages: z.array(wireMessageSchema).min(1, "messages must not be empty"),
  metadata: jsonObject.nullable().optional(),
});

/** `POST /v1/threads/{id}/in-doubt/{key}`: what to do with a call that may or may not have run. */
export const inDoubtDecisionBodySchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("retry") }),
  z.object({ action: z.literal("fail"), reason: z.string().optional() }),
  z.object({ action: z.literal("complete"), result: z.unknown() }),
]);

/**
 * The messages a state update appends (`context`, 10xGraph's name, or `messages`), validated;
 * a malformed one is a 422 naming it.
 */
export function wireMessagesOf(state: Record<string, unknown>): WireMessageInput[] {
  const list = state.context ?? state.messages;
  if (list === undefined || list === null) return [];
  const parsed = z.array(wireMessageSchema).safeParse(list);
  if (!parsed.success) throw validationError("body.state", parsed.error);
  return parsed.data;
}
