import { findNonJson } from "../storage/json-check.js";
import { StoreInputError } from "./store-errors.js";
import type { ListNamespacesOptions, StoreSearchOptions, StoreValue } from "./store.js";

/** The root label LangGraph reserves for its own namespaces. */
const RESERVED_ROOT = "langgraph";
/** Longest key and label: as an id (`MAX_ID_LENGTH`) of the checkpointers. */
const MAX_NAME = 256;
// A lone surrogate or NUL: SQLite and PostgreSQL text cannot hold it exactly.
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be refused
const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;

function requireName(operation: string, what: string, name: unknown): void {
  if (typeof name !== "string" || name === "") {
    throw new StoreInputError(operation, `${what} must be a non-empty string, got ${show(name)}`);
  }
  if (name.length > MAX_NAME || UNSTORABLE.test(name)) {
    throw new StoreInputError(
      operation,
      `${what} ${show(name)} must be at most ${MAX_NAME} characters of well-formed Unicode without U+0000`,
    );
  }
}

/**
 * Checks a namespace's labels: strings, non-empty, without `.` (namespaces are kept and matched
 * as their labels joined by `.`). `allowEmpty` for a search prefix; `wildcards` lets `"*"` stand
 * for any label (listNamespaces).
 */
export function requireNamespace(
  operation: string,
  namespace: unknown,
  { allowEmpty = false, writing = false } = {},
): asserts namespace is string[] {
  if (!Array.isArray(namespace)) {
    throw new StoreInputError(
      operation,
      `a namespace is an array of labels, got ${show(namespace)}`,
    );
  }
  if (namespace.length === 0 && !allowEmpty) {
    throw new StoreInputError(operation, "a namespace has at least one label");
  }
  for (const label of namespace) {
    requireName(operation, "a namespace label", label);
    if ((label as string).includes(".")) {
      throw new StoreInputError(operation, `namespace label ${show(label)} must not contain '.'`);
    }
  }
  if (writing && namespace[0] === RESERVED_ROOT) {
    throw new StoreInputError(
      operation,
      `a namespace cannot start with '${RESERVED_ROOT}' (reserved)`,
    );
  }
}

export function requireKey(operation: string, key: unknown): asserts key is string {
  requireName(operation, "key", key);
}

/** A value is a plain JSON object. */
export function requireValue(operation: string, value: unknown): asserts value is StoreValue {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new StoreInputError(operation, `a value is a JSON object, got ${show(value)}`);
  }
  const problem = findNonJson(value, "value");
  if (problem) throw new StoreInputError(operation, problem);
}

/** `put`'s `index`: `false`, or field paths. */
export function requireIndexFields(operation: string, index: unknown): void {
  if (index === undefined || index === false) return;
  if (!Array.isArray(index) || index.some((f) => typeof f !== "string" || f === "")) {
    throw new StoreInputError(
      operation,
      `index is false or an array of field paths, got ${show(index)}`,
    );
  }
}

/** `search`'s options, with their defaults. */
export function searchOptions(
  options: StoreSearchOptions | undefined,
): Required<Pick<StoreSearchOptions, "limit" | "offset">> &
  Pick<StoreSearchOptions, "filter" | "query"> {
  const { filter, limit = 10, offset = 0, query } = options ?? {};
  requirePage("search", limit, offset);
  if (
    filter !== undefined &&
    (typeof filter !== "object" || filter === null || Array.isArray(filter))
  ) {
    throw new StoreInputError("search", `filter is an object of fields, got ${show(filter)}`);
  }
  if (query !== undefined && typeof query !== "string") {
    throw new StoreInputError("search", `query is a string, got ${show(query)}`);
  }
  return { filter, limit, offset, query: query === "" ? undefined : query };
}

/** `listNamespaces`' options, with their defaults. */
export function namespaceOptions(
  options: ListNamespacesOptions | undefined,
): ListNamespacesOptions & { limit: number; offset: number } {
  const { prefix, suffix, maxDepth, limit = 100, offset = 0 } = options ?? {};
  requirePage("listNamespaces", limit, offset);
  if (prefix !== undefined) requireNamespace("listNamespaces", prefix, { allowEmpty: true });
  if (suffix !== undefined) requireNamespace("listNamespaces", suffix, { allowEmpty: true });
  if (maxDepth !== undefined && (!Number.isInteger(maxDepth) || maxDepth < 1)) {
    throw new StoreInputError(
      "listNamespaces",
      `maxDepth is a whole number >= 1, got ${show(maxDepth)}`,
    );
  }
  return { prefix, suffix, maxDepth, limit, offset };
}

function requirePage(operation: string, limit: unknown, offset: unknown): void {
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 1000) {
    throw new StoreInputError(
      operation,
      `limit is a whole number from 1 to 1000, got ${show(limit)}`,
    );
  }
  if (!Number.isInteger(offset) || (offset as number) < 0) {
    throw new StoreInputError(operation, `offset is a whole number >= 0, got ${show(offset)}`);
  }
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
