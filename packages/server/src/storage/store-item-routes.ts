import { z } from "zod";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { readBody } from "../http/request-input.js";
import type { Route } from "../http/route-table.js";
import type { StorageContext } from "./storage-context.js";
import {
  deleteItemSchema,
  listNamespacesSchema,
  putItemSchema,
  searchItemsSchema,
  storeItemAnswer,
  UserItems,
} from "./user-items.js";
import type { Context } from "hono";
import type { ServerEnv } from "../http/server-env.js";

const done = z.object({ success: z.literal(true) });

/** The caller's view of the store the graph uses. */
function itemsOf(c: Context<ServerEnv>, ctx: StorageContext): UserItems {
  return new UserItems(ctx.store, c.get("user").id);
}

/**
 * The long-term store's items (`/v1/store/items`, `/v1/store/namespaces`): the store the
 * graph's nodes and tools use, each user's items under their own namespace root.
 */
export const storeItemRoutes: Route<StorageContext>[] = [
  {
    method: "post",
    path: "/v1/store/items/search",
    summary: "Search the store's items under a namespace prefix",
    body: searchItemsSchema,
    responses: {
      200: {
        description: "The items found",
        schema: z.object({ items: z.array(storeItemAnswer) }),
      },
    },
    handler: async (c, ctx) => {
      const body = await readBody(c, searchItemsSchema);
      return ok(c, { items: await itemsOf(c, ctx).search(body) });
    },
  },
  {
    method: "get",
    path: "/v1/store/items",
    summary: "Get a store item (`?namespace=a.b&key=k`)",
    responses: {
      200: {
        description: "The item, or null",
        schema: z.object({ item: storeItemAnswer.nullable() }),
      },
    },
    handler: async (c, ctx) => {
      const namespace = c.req.query("namespace") ?? "";
      const key = c.req.query("key") ?? "";
      if (namespace === "" || key === "") {
        throw new ApiError(422, "VALIDATION_ERROR", "namespace and key are required", [
          {
            loc: ["query", namespace === "" ? "namespace" : "key"],
            msg: "required",
            type: "missing",
          },
        ]);
      }
      return ok(c, { item: await itemsOf(c, ctx).get(namespace.split("."), key) });
    },
  },
  {
    method: "put",
    path: "/v1/store/items",
    summary: "Put a store item (a null value deletes it)",
    body: putItemSchema,
    responses: { 200: { description: "Stored", schema: done } },
    handler: async (c, ctx) => {
      const body = await readBody(c, putItemSchema);
      if (body.ttl) throw new ApiError(422, "VALIDATION_ERROR", "items do not expire: no ttl");
      await itemsOf(c, ctx).put(body);
      return ok(c, { success: true });
    },
  },
  {
    method: "delete",
    path: "/v1/store/items",
    summary: "Delete a store item",
    body: deleteItemSchema,
    responses: { 200: { description: "Deleted (or there was none)", schema: done } },
    handler: async (c, ctx) => {
      const body = await readBody(c, deleteItemSchema);
      await itemsOf(c, ctx).delete(body.namespace, body.key);
      return ok(c, { success: true });
    },
  },
  {
    method: "post",
    path: "/v1/store/namespaces",
    summary: "The caller's namespaces that hold items",
    body: listNamespacesSchema,
    responses: {
      200: {
        description: "The namespaces",
        schema: z.object({ namespaces: z.array(z.array(z.string())) }),
      },
    },
    handler: async (c, ctx) => {
      const body = await readBody(c, listNamespacesSchema);
      return ok(c, { namespaces: await itemsOf(c, ctx).namespaces(body) });
    },
  },
];
