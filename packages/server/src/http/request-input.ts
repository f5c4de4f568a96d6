import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, validationError } from "./api-error.js";
import { requireJsonDepth, requireValidId } from "./request-limits.js";

/**
 * The request's JSON body checked against `schema`. An empty body reads as `{}` (clients send
 * DELETE with or without one); a body sent as another media type than JSON is a 415 (a page on
 * another origin can send `text/plain` without a preflight); a body that is not JSON is a 400
 * naming the problem; JSON nested too deep is a 422.
 */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== "") {
    requireJsonMediaType(c.req.header("content-type"));
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ApiError(
        400,
        "INVALID_JSON",
        `The request body is not valid JSON: ${(error as Error).message}`,
      );
    }
  }
  requireJsonDepth(json, "body");
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw validationError("body", parsed.error);
  return parsed.data;
}

/** `application/json` or a `+json` type, with any parameters (`; charset=utf-8`). */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/i;

/** A 415 `UNSUPPORTED_MEDIA_TYPE` unless the body is declared JSON. */
function requireJsonMediaType(header: string | undefined): void {
  const type = (header ?? "").split(";")[0]!.trim();
  if (JSON_MEDIA_TYPE.test(type)) return;
  throw new ApiError(
    415,
    "UNSUPPORTED_MEDIA_TYPE",
    `The request body must be sent as Content-Type: application/json, not '${type || "(none)"}'`,
  );
}

/** The query string checked against `schema`. */
export function readQuery<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw validationError("query", parsed.error);
  return parsed.data;
}

/**
 * A path id (thread, message, memory, file), percent-decoded by the router: one a store cannot
 * hold (blank, over 256 characters, U+0000, a lone surrogate) is a 422 naming it.
 */
export function pathId(c: Context, name: string): string {
  return requireValidId(c.req.param(name) ?? "", ["path", name]);
}
