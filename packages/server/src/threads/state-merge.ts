import { LG_THREAD_FIELD } from "../wire/thread-name-field.js";
import { THREAD_NAME_FIELD } from "./thread-name.js";

/**
 * Keys of 10xGraph's state dump the server owns: never written from a client's state.
 * (`context_summary` is not one: it is a state field, see `SUMMARY_FIELD`.)
 */
const RUNTIME_KEYS = new Set([
  "execution_meta",
  "context",
  "messages",
  THREAD_NAME_FIELD,
  LG_THREAD_FIELD,
]);

/**
 * 10xGraph's state merge for `PUT /v1/threads/{id}/state`: objects are merged deeply, `null`
 * never overwrites, other values replace, and runtime keys are left alone (the transcript is
 * appended separately).
 */
export function mergeState(
  stored: Record<string, unknown>,
  update: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(update)) {
    if (RUNTIME_KEYS.has(key) || value === null || value === undefined) continue;
    merged[key] = deepMerge(stored[key], value);
  }
  return merged;
}

function deepMerge(stored: unknown, value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = isPlainObject(stored) ? { ...stored } : {};
  for (const [key, inner] of Object.entries(value)) {
    if (inner === null || inner === undefined) continue;
    out[key] = deepMerge(out[key], inner);
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
