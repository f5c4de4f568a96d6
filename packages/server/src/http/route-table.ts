import type { Context, Hono } from "hono";
import type { z } from "zod";
import type { ServerContext } from "./server-context.js";
import type { ServerEnv } from "./server-env.js";

/** The HTTP methods the API uses. */
export type HttpMethod = "get" | "post" | "put" | "delete";

/**
 * One route of the API: what `/openapi.json` documents and what answers it, in one place. A
 * route module exports a table of these; the app registers them and the document is made from
 * them, so the two cannot differ.
 */
export interface Route {
  method: HttpMethod;
  /** The path in OpenAPI's form (`/v1/threads/{thread_id}`); Hono's is made from it. */
  path: string;
  summary: string;
  /** The JSON body the handler validates (`readBody`): the documented request body. */
  body?: z.ZodType;
  /** The query the handler validates (`readQuery`): the documented query parameters. */
  query?: z.ZodType;
  /** What a success answers (default: the envelope, `{ data, metadata }`). */
  response?: string;
  handler: (c: Context<ServerEnv>, ctx: ServerContext) => Response | Promise<Response>;
}

/** Hono's path for an OpenAPI path: `{name}` after a `/` becomes `:name`. */
export function honoPath(path: string): string {
  return path.replace(/\/\{(\w+)\}/g, "/:$1");
}

/** Registers `routes` on `app`, in order; each handler is given `ctx`. */
export function registerRoutes(
  app: Hono<ServerEnv>,
  ctx: ServerContext,
  routes: readonly Route[],
): void {
  for (const route of routes) {
    app.on(route.method.toUpperCase(), honoPath(route.path), (c) => route.handler(c, ctx));
  }
}
