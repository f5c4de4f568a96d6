import type { Route } from "../http/route-table.js";
import {
  memoriesForgottenAnswer,
  memoryAnswer,
  memoryChangedAnswer,
  memoryListAnswer,
  memorySearchAnswer,
  memoryStoredAnswer,
} from "./storage-answers.js";
import type { StorageContext } from "./storage-context.js";
import { z } from "zod";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { pathId, readBody } from "../http/request-input.js";

const jsonObject = z.record(z.string(), z.unknown());
const common = {
  config: jsonObject.nullable().optional(),
  options: jsonObject.nullable().optional(),
};
/** `content` is text, or a message whose text blocks are joined. */
const content = z.union([
  z.string().min(1),
  z
    .looseObject({ content: z.array(z.looseObject({ type: z.string() })) })
    .transform((m) => m.content.map((b) => (typeof b.text === "string" ? b.text : "")).join("")),
]);

/** `POST /v1/store/memories`. */
export const storeMemorySchema = z.object({
  ...common,
  content,
  memory_type: z.string().default("episodic"),
  category: z.string().default("general"),
  metadata: jsonObject.nullable().optional(),
});
/** `POST /v1/store/search`. */
export const searchMemorySchema = z.object({
  ...common,
  query: z.string().trim().min(1, "query must not be empty"),
  memory_type: z.string().nullable().optional(),
  category: z.string().nullable().optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  score_threshold: z.number().nullable().optional(),
  filters: jsonObject.nullable().optional(),
  retrieval_strategy: z.string().optional(),
  distance_metric: z.string().optional(),
  max_tokens: z.number().int().positive().optional(),
});
/** `POST /v1/store/memories/list`. */
export const listMemorySchema = z.object({
  ...common,
  limit: z.number().int().min(1).max(1000).default(100),
});
/** `PUT /v1/store/memories/{id}`. */
export const updateMemorySchema = z.object({
  ...common,
  content,
  metadata: jsonObject.nullable().optional(),
});
/** `POST /v1/store/memories/forget`. */
export const forgetMemorySchema = z.object({
  ...common,
  memory_type: z.string().nullable().optional(),
  category: z.string().nullable().optional(),
  filters: jsonObject.nullable().optional(),
});
const optionsOnly = z.object(common).loose();

/** The memory store, scoped to the authenticated user (a client's `config.user_id` is ignored). */
export const storeRoutes: Route<StorageContext>[] = [
  // Literal paths first: `/memories/list` must not be read as the memory with id "list".
  {
    method: "post",
    path: "/v1/store/memories/list",
    summary: "List memories",
    responses: {
      200: { description: "The user's memories", schema: memoryListAnswer },
    },
    body: listMemorySchema,
    handler: async (c, ctx) => {
      const { limit } = await readBody(c, listMemorySchema);
      return ok(c, { memories: await ctx.memory.list(c.get("user").id, limit) });
    },
  },
  {
    method: "post",
    path: "/v1/store/memories/forget",
    summary: "Forget memories matching a filter",
    responses: {
      200: { description: "How many were forgotten", schema: memoriesForgottenAnswer },
    },
    body: forgetMemorySchema,
    handler: async (c, ctx) => {
      const body = await readBody(c, forgetMemorySchema);
      const count = await ctx.memory.forget(c.get("user").id, {
        memory_type: body.memory_type ?? undefined,
        category: body.category ?? undefined,
        filters: body.filters ?? undefined,
      });
      return ok(c, { success: true, data: { deleted: count } });
    },
  },
  {
    method: "post",
    path: "/v1/store/memories",
    summary: "Store a memory",
    responses: {
      200: { description: "The new memory's id", schema: memoryStoredAnswer },
    },
    body: storeMemorySchema,
    handler: async (c, ctx) => {
      const body = await readBody(c, storeMemorySchema);
      const id = await ctx.memory.put(c.get("user").id, {
        content: body.content,
        memory_type: body.memory_type,
        category: body.category,
        metadata: body.metadata ?? {},
        thread_id: typeof body.config?.thread_id === "string" ? body.config.thread_id : null,
      });
      return ok(c, { memory_id: id }, "Memory stored successfully");
    },
  },
  {
    method: "post",
    path: "/v1/store/search",
    summary: "Search memories",
    responses: {
      200: { description: "The memories found, scored", schema: memorySearchAnswer },
    },
    body: searchMemorySchema,
    handler: async (c, ctx) => {
      const body = await readBody(c, searchMemorySchema);
      const found = await ctx.memory.search(
        c.get("user").id,
        body.query,
        {
          memory_type: body.memory_type || undefined,
          category: body.category || undefined,
          filters: body.filters ?? undefined,
        },
        body.limit,
      );
      const threshold = body.score_threshold ?? 0;
      const results = found
        .filter((r) => r.score >= threshold)
        .map((r) => ({ ...r, vector: null }));
      return ok(c, { results });
    },
  },
  {
    method: "post",
    path: "/v1/store/memories/{memory_id}",
    summary: "Get a memory",
    responses: {
      200: { description: "The memory, or null", schema: memoryAnswer },
    },
    handler: async (c, ctx) => {
      const id = pathId(c, "memory_id");
      await readBody(c, optionsOnly);
      const memory = await ctx.memory.get(c.get("user").id, id);
      return ok(c, { memory: memory ? { ...memory, score: 1, vector: null } : null });
    },
  },
  {
    method: "put",
    path: "/v1/store/memories/{memory_id}",
    summary: "Update a memory",
    responses: {
      200: { description: "Updated", schema: memoryChangedAnswer },
    },
    body: updateMemorySchema,
    handler: async (c, ctx) => {
      const id = pathId(c, "memory_id");
      const body = await readBody(c, updateMemorySchema);
      const done = await ctx.memory.update(
        c.get("user").id,
        id,
        body.content,
        body.metadata ?? undefined,
      );
      if (!done) throw new ApiError(404, "NOT_FOUND", `Memory '${id}' not found`);
      return ok(c, { success: true, data: { memory_id: id } });
    },
  },
  {
    method: "delete",
    path: "/v1/store/memories/{memory_id}",
    summary: "Delete a memory",
    responses: {
      200: { description: "Deleted", schema: memoryChangedAnswer },
    },
    handler: async (c, ctx) => {
      const id = pathId(c, "memory_id");
      await readBody(c, optionsOnly);
      const done = await ctx.memory.delete(c.get("user").id, id);
      if (!done) throw new ApiError(404, "NOT_FOUND", `Memory '${id}' not found`);
      return ok(c, { success: true, data: { memory_id: id } });
    },
  },
];
