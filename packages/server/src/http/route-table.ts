import type { Context as HonoContext, Hono } from "hono";
import type { z } from "zod";
import type { ServerEnv } from "./server-env.js";

/**
 * One success answer of a route. `body` says how `schema` is carried: `"envelope"` (default)
 * is `{ data, metadata }` JSON with `data` as `schema`; `"ndjson"` is one `schema` per line, or
 * per SSE event when the request accepts `text/event-stream` first; `"sse"` is one `schema` per
 * SSE event's data; `"json"` is `schema` as the whole body, without the envelope (LangGraph's
 * routes); `"bytes"` is a stored file as it was uploaded.
 */
export type RouteResponse =
  | { description: string; schema: z.ZodType; body?: "envelope" | "ndjson" | "sse" | "json" }
  | { description: string; body: "bytes" };

/** The HTTP methods the API uses. */
export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/**
 * One route of the API: what `/openapi.json` documents and what answers it, in one place. A
 * route module exports a table of these; the app registers them and the document is made from
 * them, so the two cannot differ. `Context` is what the handler works with: each job folder
 * names its own part of the server's context, so no job imports the app that assembles it.
 */
export interface Route<Context = unknown> {
  method: HttpMethod;
  /** The path in OpenAPI's form (`/v1/threads/{thread_id}`); Hono's is made from it. */
  path: string;
  summary: string;
  /** The JSON body the handler validates (`readBody`): the documented request body. */
  body?: z.ZodType;
  /** The query the handler validates (`readQuery`): the documented query parameters. */
  query?: z.ZodType;
  /**
   * What the route answers, by success status: the schema of the envelope's `data`, of each
   * streamed item, or the raw bytes. Errors are always the error envelope (`fail`). Documented
   * in `/openapi.json`, checked against the client's types in `wire/wire-contract.ts`, never
   * run on a live answer.
   */
  responses: Readonly<Record<number, RouteResponse>>;
  /** How errors answer: the error envelope (default), or LangGraph's `{ detail }`. */
  errors?: "envelope" | "detail";
  handler: (c: HonoContext<ServerEnv>, ctx: Context) => Response | Promise<Response>;
}

/** Hono's path for an OpenAPI path: `{name}` after a `/` becomes `:name`. */
export function honoPath(path: string): string {
  return path.replace(/\/\{(\w+)\}/g, "/:$1");
}

/** Registers `routes` on `app`, in order; each handler is given `ctx`. */
export function registerRoutes<Context>(
  app: Hono<ServerEnv>,
  ctx: Context,
  routes: readonly Route<Context>[],
): void {
  for (const route of routes) {
    app.on(route.method.toUpperCase(), honoPath(route.path), (c) => route.handler(c, ctx));
  }
}
