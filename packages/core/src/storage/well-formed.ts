import { StorageError } from "../errors/errors.js";

// A high surrogate not followed by a low one, or a low one not preceded by a high one; or NUL.
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be refused
const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;

/**
 * For checkpointer implementations: refuses identifiers (thread ids, message ids, ledger keys)
 * that a database text column cannot hold exactly, before anything is written. UTF-8 has no
 * encoding for a lone surrogate (it would come back as U+FFFD, so the id a listing returns would
 * name no thread), and PostgreSQL text cannot hold U+0000. JSON values are unaffected: every
 * store keeps them exactly (`jsonb`, which refuses both, gets them wrapped as JSON text).
 */
export function requireWellFormed(
  operation: string,
  fields: Record<string, string | null | undefined>,
): void {
  // `for...in` (own fields only, as `Object.entries`): no array of entries per check, and a
  // write makes several.
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue;
    const value = fields[name];
    if (typeof value !== "string" || !UNSTORABLE.test(value)) continue;
    const why =
      `${name} ${JSON.stringify(value)} cannot be stored exactly: it holds a lone surrogate ` +
      `(not well-formed Unicode) or the character U+0000`;
    throw new StorageError(operation, new Error(why));
  }
}
