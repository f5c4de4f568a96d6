import type { Context } from "hono";
import { z } from "zod";
import { ApiError, toApiError } from "../http/api-error.js";
import type { Route } from "../http/route-table.js";
import type { LgContext } from "./lg-context.js";

/**
 * A LangGraph Agent Server route: its handler's errors answer in that server's shape
 * (`{ detail }`, with our code and the validation issues beside it) instead of the /v1
 * envelope, so LangGraph's clients read them as they read their own server's.
 */
export function lgRoute(route: Route<LgContext>): Route<LgContext> {
  return {
    ...route,
    errors: "detail",
    handler: async (c, ctx) => {
      try {
        return await route.handler(c, ctx);
      } catch (error) {
        return lgError(c, ctx, error);
      }
    },
  };
}

/** LangGraph's error answer, with our code (and validation issues) beside its `detail`. */
export const lgErrorSchema = z.object({
  detail: z.string(),
  code: z.string(),
  errors: z
    .array(z.object({ loc: z.array(z.string()), msg: z.string(), type: z.string() }))
    .optional(),
});

/** A JSON answer of a LangGraph route (no envelope): an object, by default. */
export function lgJson(description: string, schema: z.ZodType = z.looseObject({})) {
  return { 200: { description, schema, body: "json" as const } };
}

/** Any thrown value as LangGraph's error answer. */
export function lgError(c: Context, ctx: LgContext, error: unknown): Response {
  const apiError = toApiError(error);
  if (apiError.status >= 500) ctx.logger.error({ err: error, path: c.req.path }, "Request failed");
  return c.json(lgErrorBody(apiError), apiError.status);
}

/** LangGraph's error body: `detail`, and our code and field errors beside it. */
export function lgErrorBody(apiError: ApiError): z.infer<typeof lgErrorSchema> {
  return {
    detail: apiError.message,
    code: apiError.code,
    ...(apiError.details.length ? { errors: apiError.details } : {}),
  };
}

/** The first segments of LangGraph's routes: none of ours (under `/v1`) starts with one. */
const LANGGRAPH_PREFIXES = ["/assistants", "/threads", "/runs", "/store"];

/**
 * A path of LangGraph's API, routed or not: an error raised before its route's handler (no
 * token, a body too large, no such route) is answered in LangGraph's shape there too.
 */
export function isLangGraphPath(path: string): boolean {
  return LANGGRAPH_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/** A 422 for something LangGraph's API offers that this server does not do, with why. */
export function unsupported(where: string[], why: string): ApiError {
  return new ApiError(422, "UNSUPPORTED", `${where.join(".")}: ${why}`, [
    { loc: where, msg: why, type: "unsupported" },
  ]);
}

/** A table of LangGraph routes, each answering errors in LangGraph's shape. */
export function lgRoutes(routes: Route<LgContext>[]): Route<LgContext>[] {
  return routes.map(lgRoute);
}
