import { StorageError } from "@tenxgraph/core/storage";
import { isTenxgraphError } from "@tenxgraph/core";

/**
 * The connection broke or could not be made: the server is down, restarting, or unreachable.
 * Whether a statement sent on it was applied is unknown.
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    if (NODE_NETWORK_CODES.has(code)) return true;
    // 08: connection exception; 57P01-57P03: the server is shutting down or starting up.
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03") {
      return true;
    }
  }
  const message = error instanceof Error ? error.message : "";
  // "Query read timeout": the server did not answer within query_timeout; the connection is in
  // an unknown state and the statement may have run.
  return /Connection terminated|connection timeout|Client has encountered a connection error|Query read timeout/i.test(
    message,
  );
}

/**
 * The server refused the transaction and rolled it back (a deadlock, a serialization failure):
 * running it again is always safe and usually succeeds.
 */
export function isRolledBack(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40001" || code === "40P01";
}

const NODE_NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** What common PostgreSQL failures mean for the user, by SQLSTATE. */
const HINTS: Record<string, string> = {
  "57014": "took longer than statementTimeoutMs and was cancelled",
  "55P03": "waited longer than lockTimeoutMs for a lock another connection holds",
  "53300": "found no free connection slot on the server (too many connections)",
  "28P01": "was refused: wrong password",
  "28000": "was refused by the server's authentication rules",
  "3D000": "names a database that does not exist",
  "42501": "lacks a privilege it needs",
  "53100": "ran out of disk space on the server",
};

/**
 * Translates a `pg` failure into a tenxgraph error that names the problem, keeping the original
 * as `cause`. Errors that are already tenxgraph's (a stale version) pass through.
 */
export function mapPgError(operation: string, location: string, error: unknown): Error {
  if (isTenxgraphError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const hint =
    typeof code === "string" && HINTS[code]
      ? HINTS[code]
      : isConnectionError(error)
        ? "could not reach PostgreSQL (the server is down, restarting or unreachable)"
        : undefined;
  if (!hint) return new StorageError(operation, error);
  return new StorageError(
    operation,
    new Error(`${location} ${hint}: ${errorMessage(error)}`, { cause: error }),
  );
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
