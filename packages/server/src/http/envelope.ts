import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import type { ApiError } from "./api-error.js";

/** `metadata` of every JSON answer. */
export interface ResponseMetadata {
  request_id: string;
  timestamp: string;
  message: string;
}

/** {@link ResponseMetadata} as a schema, for `/openapi.json`. */
export const responseMetadataSchema = z.object({
  request_id: z.string(),
  timestamp: z.string(),
  message: z.string(),
});

/** The error envelope every error answers with (`fail`), as a schema, for `/openapi.json`. */
export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ loc: z.array(z.string()), msg: z.string(), type: z.string() })),
  }),
  metadata: responseMetadataSchema,
});

/** Local ISO-8601 time without a zone, as the reference server writes it. */
export function wireTimestamp(date = new Date()): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, -1);
}

/** The request id of `c` (set by the request-id middleware; a fresh one if it did not run). */
export function requestId(c: Context): string {
  const id = c.get("requestId") as string | undefined;
  return id ?? crypto.randomUUID();
}

/** The metadata block for an answer to `c`. */
export function metadata(c: Context, message = "OK"): ResponseMetadata {
  return { request_id: requestId(c), timestamp: wireTimestamp(), message };
}

/** A success envelope: `{ data, metadata }`. */
export function ok(c: Context, data: unknown, message = "OK", status: ContentfulStatusCode = 200) {
  return c.json({ data, metadata: metadata(c, message) }, status);
}

/** The error envelope body for `error`. */
export function errorBody(c: Context, error: ApiError) {
  return {
    error: { code: error.code, message: error.message, details: error.details },
    metadata: metadata(c, error.message),
  };
}

/** An error envelope answer. */
export function fail(c: Context, error: ApiError) {
  return c.json(errorBody(c, error), error.status);
}
