import type { StoreFilter, StoreValue } from "./store.js";

const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

/**
 * Whether `value` matches `filter` (LangGraph's store filter): each field given must match; a
 * plain filter value matches an equal JSON value (objects and arrays too), an object of
 * operators compares (`$gt` and the like compare numbers, or strings with strings).
 */
export function matchesFilter(value: StoreValue, filter: StoreFilter | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, wanted]) =>
    isOperators(wanted)
      ? Object.entries(wanted).every(([op, operand]) => compare(value[field], op, operand))
      : sameJson(value[field], wanted),
  );
}

function isOperators(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => OPERATORS.has(key));
}

function compare(actual: unknown, op: string, operand: unknown): boolean {
  switch (op) {
    case "$eq":
      return sameJson(actual, operand);
    case "$ne":
      return !sameJson(actual, operand);
    case "$in":
      return Array.isArray(operand) && operand.some((o) => sameJson(actual, o));
    case "$nin":
      return !Array.isArray(operand) || !operand.some((o) => sameJson(actual, o));
    default:
      return ordered(actual, op, operand);
  }
}

/** `$gt`, `$gte`, `$lt`, `$lte`: numbers with numbers, strings with strings; else no match. */
function ordered(actual: unknown, op: string, operand: unknown): boolean {
  const comparable =
    (typeof actual === "number" && typeof operand === "number") ||
    (typeof actual === "string" && typeof operand === "string");
  if (!comparable) return false;
  const a = actual as number | string;
  const b = operand as number | string;
  if (op === "$gt") return a > b;
  if (op === "$gte") return a >= b;
  if (op === "$lt") return a < b;
  return a <= b;
}

/** Equal as JSON values, whatever the order of object keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameJson(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left).filter((k) => left[k] !== undefined);
  const otherKeys = Object.keys(right).filter((k) => right[k] !== undefined);
  return keys.length === otherKeys.length && keys.every((k) => sameJson(left[k], right[k]));
}
