import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { ApiError } from "./api-error.js";

/** `ORIGINS` from the environment, split on commas; `undefined` when unset or blank. */
export function originsFromEnv(): string[] | undefined {
  const list = (process.env.ORIGINS ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
  return list.length > 0 ? list : undefined;
}

/**
 * The CORS middleware for `origins`, or `null` for none: without configured origins a browser
 * page on another origin gets no `Access-Control-Allow-*` header, so it can neither read an
 * answer nor send a preflighted request. Listed origins get credentials (cookies, auth headers);
 * `"*"` allows any origin without credentials: an origin is never reflected with credentials.
 */
export function corsMiddleware(origins: string[] | undefined): MiddlewareHandler | null {
  if (!origins || origins.length === 0) return null;
  const any = origins.includes("*");
  return cors({
    origin: any ? "*" : origins,
    credentials: !any,
    allowHeaders: ["authorization", "content-type", "accept", "x-request-id", "last-event-id"],
    allowMethods: ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"],
    exposeHeaders: ["X-Request-ID", "X-Timestamp"],
  });
}

/** Methods a browser sends across origins without asking first, or that read nothing. */
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * True when a request with this `Origin` may act: no `Origin` (not a browser page), the
 * server's own host (the inspector; `Host` or, behind a proxy, `X-Forwarded-Host`), or a
 * configured origin (any with `"*"`). CORS only hides answers: a page on another origin can
 * still send a form post or open a WebSocket, so writes from one are refused outright.
 */
export function originAllowed(
  origin: string | null | undefined,
  headers: { host?: string | null; forwardedHost?: string | null },
  origins: string[] | undefined,
): boolean {
  if (!origin) return true;
  if (origins?.includes("*") || origins?.includes(origin)) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host === headers.host || host === headers.forwardedHost;
}

/**
 * Refuses a write (any method but GET, HEAD, OPTIONS) sent by a page on an origin that is
 * neither the server's nor configured: 403 `ORIGIN_NOT_ALLOWED`, before anything runs.
 */
export function originGuard(origins: string[] | undefined): MiddlewareHandler {
  return async function guardOrigin(c, next) {
    const origin = c.req.header("origin");
    if (READ_METHODS.has(c.req.method) || !origin) return next();
    const headers = { host: c.req.header("host"), forwardedHost: c.req.header("x-forwarded-host") };
    if (originAllowed(origin, headers, origins)) return next();
    throw new ApiError(
      403,
      "ORIGIN_NOT_ALLOWED",
      `Requests from origin '${origin}' are not allowed: list it in ORIGINS (corsOrigins)`,
    );
  };
}
