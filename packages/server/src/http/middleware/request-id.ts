import type { MiddlewareHandler } from "hono";
import { wireTimestamp } from "../envelope.js";
import type { ServerEnv } from "../server-env.js";

/** A sane incoming request id: kept so a caller can trace its request; anything else is replaced. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id (`X-Request-ID`, kept when the caller sent a sane one) and a timestamp header. */
export function requestIdMiddleware(): MiddlewareHandler<ServerEnv> {
  return async function requestId(c, next) {
    const given = c.req.header("x-request-id");
    const id = given && ACCEPTED_ID.test(given) ? given : crypto.randomUUID();
    c.set("requestId", id);
    c.header("X-Request-ID", id);
    c.header("X-Timestamp", wireTimestamp());
    await next();
  };
}
