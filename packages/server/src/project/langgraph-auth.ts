import { ApiError } from "../http/api-error.js";
import type { Authenticate } from "../http/middleware/auth.js";

/**
 * What `new Auth()` of `@langchain/langgraph-sdk/auth` holds once configured: its handlers in a
 * field the SDK names `~handlerCache`. Read by shape, so the server depends on no SDK.
 */
interface LangGraphAuthHandlers {
  authenticate?: (request: Request) => unknown;
  callbacks?: Record<string, unknown>;
}

/** True for a LangGraph `Auth` object (an export of `auth.path` in a `langgraph.json`). */
export function isLangGraphAuth(value: unknown): boolean {
  const cache = (value as { "~handlerCache"?: unknown } | null | undefined)?.["~handlerCache"];
  return typeof cache === "object" && cache !== null;
}

/**
 * Our custom authentication from a LangGraph `Auth` object: its `authenticate(request)` handler
 * names the user (a string, or `{ identity, permissions, … }`, kept as the user's claims), and
 * an `HTTPException` it throws answers with its status. Its `.on(…)` authorization handlers are
 * refused at start-up rather than ignored: they filter resources by metadata, which this server
 * does not run, and a server that silently dropped them would serve what they meant to hide.
 * Here every thread, run, cron and store item belongs to the identity that made it.
 */
export function fromLangGraphAuth(value: unknown, where: string): Authenticate {
  const handlers = (value as { "~handlerCache": LangGraphAuthHandlers })["~handlerCache"];
  const events = Object.keys(handlers.callbacks ?? {});
  if (events.length > 0) {
    throw new Error(
      `${where}: the Auth object registers authorization handlers (.on(${events
        .map((e) => JSON.stringify(e))
        .join(", ")})), which tenxgraph does not run: every thread, run, cron and store item ` +
        `belongs to the authenticated identity that made it. Remove the .on() handlers to serve ` +
        `with its authenticate() alone (docs/coming-from-langgraph.md)`,
    );
  }
  const authenticate = handlers.authenticate;
  if (typeof authenticate !== "function") {
    throw new Error(`${where}: the Auth object has no authenticate() handler`);
  }
  return async (request) => {
    let user: unknown;
    try {
      user = await authenticate(request);
    } catch (error) {
      throw asApiError(error);
    }
    return userOf(user);
  };
}

/** The user a LangGraph `authenticate` returned: a string is the identity itself. */
function userOf(user: unknown): { id: string; claims: Record<string, unknown> } | null {
  if (typeof user === "string") return { id: user, claims: { identity: user, permissions: [] } };
  if (typeof user !== "object" || user === null) return null;
  const { identity } = user as { identity?: unknown };
  if (typeof identity !== "string") return null;
  return { id: identity, claims: { ...(user as Record<string, unknown>) } };
}

/** An `HTTPException` (anything with a numeric 4xx `status`) keeps its status and message. */
function asApiError(error: unknown): unknown {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== "number" || status < 400 || status > 499) return error;
  const message = error instanceof Error ? error.message : "Authentication failed";
  const code =
    status === 401 ? "INVALID_TOKEN" : status === 403 ? "PERMISSION_DENIED" : "BAD_REQUEST";
  return new ApiError(status as 401, code, message);
}
