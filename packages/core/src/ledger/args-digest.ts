import { canonicalJson, sha256Hex } from "../storage/json-digest.js";

/**
 * The digest of a call's arguments as the model sent them (`ToolCall.arguments`), recorded with
 * the call's result: a call replays its record only while its arguments are still the ones it
 * ran with (an assistant message edited in place keeps its ids, not its arguments).
 *
 * Canonical, so only a change of value counts: the text is parsed as JSON and written back with
 * object keys sorted (whitespace and key order do not matter); text that is not JSON is taken
 * as it is. Taken from the model's arguments, not the schema-checked ones, so a release that
 * changes a tool's schema (a new default, a transform) never makes a recorded call look edited.
 * Strings go through `JSON.stringify`, which escapes lone surrogates, so two arguments that
 * differ only there never share a digest.
 */
export function argsDigest(argumentsText: string): string {
  let canonical: string;
  try {
    canonical = canonicalJson(argumentsText.trim() === "" ? {} : JSON.parse(argumentsText));
  } catch {
    canonical = JSON.stringify(argumentsText);
  }
  return `sha256:${sha256Hex(canonical)}`;
}
