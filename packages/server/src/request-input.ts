import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, validationError } from "./api-error.js";

/**
 * The request's JSON body checked against `schema`. An empty body reads as `{}` (clients send
 * DELETE with or without one); a body that is not JSON is a 400 naming the problem.
 */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== "") {
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
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw validationError("body", parsed.error);
  return parsed.data;
}

/** The query string checked against `schema`. */
export function readQuery<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw validationError("query", parsed.error);
  return parsed.data;
}

/** Longest id accepted in a path: ids are generated URL-safe and far shorter. */
const MAX_ID_LENGTH = 512;

/** A path id (thread, message, memory, file), percent-decoded by the router; blank is a 422. */
export function pathId(c: Context, name: string): string {
  const value = c.req.param(name) ?? "";
  if (value.trim() === "" || value.length > MAX_ID_LENGTH) {
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      `Invalid ${name}: must be 1..${MAX_ID_LENGTH} characters, not blank`,
      [{ loc: ["path", name], msg: "invalid id", type: "value_error" }],
    );
  }
  return value;
}
