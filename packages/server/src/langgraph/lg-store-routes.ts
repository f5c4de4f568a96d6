import { z } from "zod";
import type { Context } from "hono";
import { ApiError } from "../http/api-error.js";
import { readBody } from "../http/request-input.js";
import type { ServerEnv } from "../http/server-env.js";
import type { MemoryRecord } from "../storage/memory-store.js";
import type { LgContext } from "./lg-context.js";
import { lgJson, lgRoutes, unsupported } from "./lg-http.js";

/**
 * LangGraph's store (items by namespace and key) on the server's memory store, the one
 * `/v1/store` uses: an item is a memory of type `langgraph`, its namespace joined by `.` as
 * its category, its value as its JSON content. Items are the caller's, as memories are.
 */
const ITEM_TYPE = "langgraph";
/** The most records one user's listing reads: a store holds memories, not a database. */
const MAX_SCAN = 100_000;

const label = z
  .string()
  .min(1)
  .refine((s) => !s.includes("."), "a namespace label has no '.'");
const namespace = z.array(label).min(1, "a namespace has at least one label");
const putSchema = z.looseObject({
  namespace,
  key: z.string().min(1),
  value: z.record(z.string(), z.unknown()).nullable(),
  index: z.unknown().optional(),
  ttl: z.number().nullish(),
});
const deleteSchema = z.looseObject({ namespace, key: z.string().min(1) });
const searchSchema = z.looseObject({
  namespace_prefix: z.array(label).default([]),
  filter: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  query: z.string().nullish(),
});
const namespacesSchema = z.looseObject({
  prefix: z.array(label).nullish(),
  suffix: z.array(label).nullish(),
  max_depth: z.number().int().min(1).nullish(),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
});

interface ItemMetadata {
  namespace: string[];
  key: string;
  created_at: string;
  updated_at: string;
}

/** The caller's LangGraph items. */
async function items(ctx: LgContext, c: Context<ServerEnv>): Promise<MemoryRecord[]> {
  const all = await ctx.memory.list(c.get("user").id, MAX_SCAN);
  return all.filter((r) => r.memory_type === ITEM_TYPE);
}

function find(list: MemoryRecord[], ns: string[], key: string): MemoryRecord | undefined {
  return list.find(
    (r) => r.category === ns.join(".") && (r.metadata as unknown as ItemMetadata).key === key,
  );
}

/** A record as LangGraph's store item. */
function itemOf(record: MemoryRecord) {
  const meta = record.metadata as unknown as ItemMetadata;
  return {
    namespace: meta.namespace,
    key: meta.key,
    value: JSON.parse(record.content) as Record<string, unknown>,
    created_at: meta.created_at,
    updated_at: meta.updated_at,
  };
}

function startsWith(list: string[], prefix: string[]): boolean {
  return prefix.every((label, i) => list[i] === label);
}

/** LangGraph's store: put, get, delete, search, list namespaces. */
export const lgStoreRoutes = lgRoutes([
  {
    method: "put",
    path: "/store/items",
    summary: "Put an item (a null value deletes it) (LangGraph)",
    body: putSchema,
    responses: { 204: { description: "Stored", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const body = await readBody(c, putSchema);
      if (body.index !== undefined && body.index !== null && body.index !== false)
        throw unsupported(["body", "index"], "no vector index: search filters on values");
      if (body.ttl) throw unsupported(["body", "ttl"], "items do not expire");
      const userId = c.get("user").id;
      const existing = find(await items(ctx, c), body.namespace, body.key);
      const now = new Date().toISOString();
      if (body.value === null) {
        if (existing) await ctx.memory.delete(userId, existing.id);
      } else if (existing) {
        await ctx.memory.update(userId, existing.id, JSON.stringify(body.value), {
          updated_at: now,
        });
      } else {
        const metadata: ItemMetadata = {
          namespace: body.namespace,
          key: body.key,
          created_at: now,
          updated_at: now,
        };
        await ctx.memory.put(userId, {
          content: JSON.stringify(body.value),
          memory_type: ITEM_TYPE,
          category: body.namespace.join("."),
          metadata: metadata as unknown as Record<string, unknown>,
          thread_id: null,
        });
      }
      return c.body(null, 204);
    },
  },
  {
    method: "get",
    path: "/store/items",
    summary: "Get an item (LangGraph)",
    responses: lgJson("The item"),
    handler: async (c, ctx) => {
      const ns = c.req.query("namespace") ?? "";
      const key = c.req.query("key") ?? "";
      if (ns === "" || key === "") throw unsupported(["query"], "namespace and key are required");
      const found = find(await items(ctx, c), ns.split("."), key);
      if (!found) throw new ApiError(404, "NOT_FOUND", "Item not found");
      return c.json(itemOf(found));
    },
  },
  {
    method: "delete",
    path: "/store/items",
    summary: "Delete an item (LangGraph)",
    body: deleteSchema,
    responses: { 204: { description: "Deleted", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const body = await readBody(c, deleteSchema);
      const found = find(await items(ctx, c), body.namespace, body.key);
      if (!found) throw new ApiError(404, "NOT_FOUND", "Item not found");
      await ctx.memory.delete(c.get("user").id, found.id);
      return c.body(null, 204);
    },
  },
  {
    method: "post",
    path: "/store/items/search",
    summary: "Items under a namespace prefix whose values match a filter (LangGraph)",
    body: searchSchema,
    responses: lgJson("The items", z.object({ items: z.array(z.looseObject({})) })),
    handler: async (c, ctx) => {
      const body = await readBody(c, searchSchema);
      if (body.query) throw unsupported(["body", "query"], "no vector index: use filter");
      const found = (await items(ctx, c))
        .map(itemOf)
        .filter((item) => startsWith(item.namespace, body.namespace_prefix))
        .filter((item) =>
          Object.entries(body.filter ?? {}).every(
            ([k, v]) => JSON.stringify(item.value[k]) === JSON.stringify(v),
          ),
        )
        .sort((a, b) => b.updated_at.localeCompare(a.updated_at));
      return c.json({ items: found.slice(body.offset, body.offset + body.limit) });
    },
  },
  {
    method: "post",
    path: "/store/namespaces",
    summary: "The namespaces that hold items (LangGraph)",
    body: namespacesSchema,
    responses: lgJson("The namespaces", z.object({ namespaces: z.array(z.array(z.string())) })),
    handler: async (c, ctx) => {
      const body = await readBody(c, namespacesSchema);
      const seen = new Map<string, string[]>();
      for (const item of (await items(ctx, c)).map(itemOf)) {
        let ns = item.namespace;
        if (body.prefix && !startsWith(ns, body.prefix)) continue;
        if (body.suffix && !startsWith([...ns].reverse(), [...body.suffix].reverse())) continue;
        if (body.max_depth) ns = ns.slice(0, body.max_depth);
        seen.set(ns.join("."), ns);
      }
      const sorted = [...seen.values()].sort((a, b) => a.join(".").localeCompare(b.join(".")));
      return c.json({ namespaces: sorted.slice(body.offset, body.offset + body.limit) });
    },
  },
]);
