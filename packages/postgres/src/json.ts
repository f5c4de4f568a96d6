/**
 * JSON for `jsonb` columns. `jsonb` cannot hold the character U+0000 (`\u0000` in JSON text),
 * which tool output and model text may contain, so such a value is stored as its JSON text
 * inside a one-key wrapper object and unwrapped on read. A value that looks like the wrapper is
 * wrapped too, so reading is never ambiguous.
 */
const WRAPPER_KEY = "$tenxgraph.jsonText";

/** The JSON text to send as a `jsonb` parameter. */
export function toJsonb(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.includes("\\u0000") || looksWrapped(value)
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
