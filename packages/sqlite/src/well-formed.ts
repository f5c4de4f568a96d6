import { StorageError } from "@tenxgraph/core";

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Refuses identifiers that are not well-formed Unicode before they are written. SQLite stores
 * text as UTF-8, where a lone surrogate has no encoding: it would come back as U+FFFD, so the id
 * a listing returns would name no thread and a ledger key would match no call. (JSON values are
 * safe: `JSON.stringify` escapes lone surrogates.)
 */
export function requireWellFormed(
  operation: string,
  fields: Record<string, string | null | undefined>,
): void {
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value !== "string" || !LONE_SURROGATE.test(value)) continue;
    const why = `${name} ${JSON.stringify(value)} is not well-formed Unicode (a lone surrogate), which SQLite cannot store`;
    throw new StorageError(operation, new Error(why));
  }
}
