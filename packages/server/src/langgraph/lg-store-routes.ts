import { z } from "zod";
import type { Context } from "hono";
import { ApiError } from "../http/api-error.js";
import { readBody } from "../http/request-input.js";
import type { ServerEnv } from "../http/server-env.js";
import {
  deleteItemSchema,
  listNamespacesSchema,
  putItemSchema,
  searchItemsSchema,
  UserItems,
} from "../storage/user-items.js";
import type { LgContext } from "./lg-context.js";
import { lgJson, lgRoutes, unsupported } from "./lg-http.js";

/**
 * LangGraph's store on the long-term store the graph's nodes and tools use (the one `/v1/store`
 * serves): each user's items under their own namespace root, as {@link UserItems} says.
 */
function itemsOf(c: Context<ServerEnv>, ctx: LgContext): UserItems {
  return new UserItems(ctx.store, c.get("user").id);
}

/** LangGraph's store: put, get, delete, search, list namespaces. */
export const lgStoreRoutes = lgRoutes([
  {
    method: "put",
    path: "/store/items",
    summary: "Put an item (a null value deletes it) (LangGraph)",
    body: putItemSchema,
    responses: { 204: { description: "Stored", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const body = await readBody(c, putItemSchema);
      if (body.ttl) throw unsupported(["body", "ttl"], "items do not expire");
      await itemsOf(c, ctx).put(body);
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
      const found = await itemsOf(c, ctx).get(ns.split("."), key);
      if (!found) throw new ApiError(404, "NOT_FOUND", "Item not found");
      return c.json(found);
    },
  },
  {
    method: "delete",
    path: "/store/items",
    summary: "Delete an item (LangGraph)",
    body: deleteItemSchema,
    responses: { 204: { description: "Deleted", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const body = await readBody(c, deleteItemSchema);
      const items = itemsOf(c, ctx);
      if (!(await items.get(body.namespace, body.key))) {
        throw new ApiError(404, "NOT_FOUND", "Item not found");
      }
      await items.delete(body.namespace, body.key);
      return c.body(null, 204);
    },
  },
  {
    method: "post",
    path: "/store/items/search",
    summary: "Items under a namespace prefix, filtered, or ranked by a query (LangGraph)",
    body: searchItemsSchema,
    responses: lgJson("The items", z.object({ items: z.array(z.looseObject({})) })),
    handler: async (c, ctx) => {
      const body = await readBody(c, searchItemsSchema);
      return c.json({ items: await itemsOf(c, ctx).search(body) });
    },
  },
  {
    method: "post",
    path: "/store/namespaces",
    summary: "The namespaces that hold items (LangGraph)",
    body: listNamespacesSchema,
    responses: lgJson("The namespaces", z.object({ namespaces: z.array(z.array(z.string())) })),
    handler: async (c, ctx) => {
      const body = await readBody(c, listNamespacesSchema);
      return c.json({ namespaces: await itemsOf(c, ctx).namespaces(body) });
    },
  },
]);
