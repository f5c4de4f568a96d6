import { TenxgraphClient, isClientError } from "@tenxgraph/client";

/** Where the page keeps the pasted token: for this tab only, gone when it closes. */
const TOKEN_KEY = "tenxgraph.inspector.token";

/** The token pasted on this tab, or null. */
export function savedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps `token` for this tab (null forgets it). */
export function saveToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/**
 * The client the page talks through. The server that serves the page is the API: its origin is
 * the base URL. The token is read before every request, so pasting one takes effect at once.
 */
export function createClient(origin: string = window.location.origin): TenxgraphClient {
  return new TenxgraphClient({ baseUrl: origin, token: () => savedToken() });
}

/** True when `error` means the server wants a (new) token. */
export function needsToken(error: unknown): boolean {
  return isClientError(error) && error.status === 401;
}

/** A sentence a person understands for a failed request, with the server's code to look up. */
export function explain(error: unknown): string {
  if (!isClientError(error)) return error instanceof Error ? error.message : String(error);
  switch (error.status) {
    case 0:
      return "The server does not answer. Is `tenxgraph api` still running?";
    case 401:
      return `The server did not accept the token (${error.code}): ${error.message}`;
    case 403:
    case 404:
      return `Not found, or not yours (${error.code}): ${error.message}`;
    default:
      return `${error.message} (${error.code}, HTTP ${error.status})`;
  }
}

/**
 * True when the server has no such route (an older server, without the feature): it answers
 * 404 "No route …", where a missing thread or version names what is missing.
 */
export function isMissingRoute(error: unknown): boolean {
  return isClientError(error) && error.status === 404 && error.message.startsWith("No route");
}
