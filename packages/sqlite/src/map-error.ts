import { StorageError, StorageSchemaError } from "@tenxgraph/core/storage";
import { isTenxgraphError } from "@tenxgraph/core";

/**
 * Translates a better-sqlite3 failure into a tenxgraph error that names the problem, keeping
 * the original as `cause`. Errors that are already tenxgraph's (a stale version) pass through.
 */
export function mapSqliteError(operation: string, location: string, error: unknown): Error {
  if (isTenxgraphError(error)) return error;
  const code = sqliteCode(error);
  const cause = { cause: error };
  if (code === "SQLITE_NOTADB") {
    const detail = "the file is not a SQLite database; it was left untouched";
    return new StorageSchemaError("STORAGE_SCHEMA_002", location, detail, cause);
  }
  if (code?.startsWith("SQLITE_CORRUPT")) {
    const detail = `the database file is corrupt (${code}); restore it from a backup`;
    return new StorageSchemaError("STORAGE_SCHEMA_002", location, detail, cause);
  }
  const hint = code ? HINTS[code.split("_").slice(0, 2).join("_")] : undefined;
  if (!hint) return new StorageError(operation, error);
  return new StorageError(
    operation,
    new Error(`'${location}' ${hint}: ${errorMessage(error)}`, cause),
  );
}

/** What the common environment failures mean for the user, by primary SQLite result code. */
const HINTS: Record<string, string> = {
  SQLITE_READONLY: "cannot be written (a read-only file, folder or file system)",
  SQLITE_CANTOPEN: "cannot be opened or created (check that its folder exists and is writable)",
  SQLITE_BUSY: "stayed locked by another connection for longer than busyTimeoutMs",
  SQLITE_FULL: "cannot grow: the disk is full",
  SQLITE_IOERR: "hit an I/O error",
  SQLITE_PERM: "cannot be accessed (permission denied)",
};

function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
