/**
 * JSON for `jsonb` columns. `jsonb` refuses two things JSON text can say: the character U+0000
 * (`\u0000`), which tool output and model text may contain, and a lone UTF-16 surrogate (`\ud83d`
 * with no low half after it, or a low half alone), which `text.slice(0, n)` leaves when it cuts
 * an emoji in two. A JavaScript string may hold either, and `JSON.stringify` writes both as such
 * escapes (a surrogate pair it writes as the character itself). A value whose JSON text holds one
 * is stored as that text inside a one-key wrapper object, where it is a plain string `jsonb`
 * keeps, and unwrapped on read, so the value comes back exactly as it was written. A value that
 * looks like the wrapper is wrapped too, so reading is never ambiguous.
 */
const WRAPPER_KEY = "$tenxgraph.jsonText";

/**
 * An escape `jsonb` refuses: U+0000, or any surrogate (a pair is never escaped, so an escaped
 * surrogate is a lone one). An escaped backslash followed by such letters matches too; the
 * value is then wrapped without need, which costs a little space and changes nothing.
 */
const REFUSED_BY_JSONB = /\\u(?:0000|[dD][89a-fA-F])/;

/** The JSON text to send as a `jsonb` parameter. */
export function toJsonb(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return REFUSED_BY_JSONB.test(text) || looksWrapped(value)
    ? JSON.stringify({ [WRAPPER_KEY]: text })
    : text;
}

/** The value a `jsonb` column held, as `pg` parsed it. */
export function fromJsonb(stored: unknown): unknown {
  return looksWrapped(stored)
    ? JSON.parse((stored as Record<string, string>)[WRAPPER_KEY]!)
    : stored;
}

function looksWrapped(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return (
    keys.length === 1 &&
    keys[0] === WRAPPER_KEY &&
    typeof (value as Record<string, unknown>)[WRAPPER_KEY] === "string"
  );
}
