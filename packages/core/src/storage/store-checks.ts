import { StorageError } from "../errors/errors.js";
import { MAX_ID_LENGTH } from "./json-check.js";
import { requireWellFormed } from "./well-formed.js";

/** A page as every engine takes it: whole numbers >= 0; `limit` `null` means no limit. */
export interface Page {
  offset: number;
  limit: number | null;
}

/** A version number: a whole number >= 1. */
export function requireVersion(operation: string, version: unknown): number {
  if (typeof version === "number" && Number.isInteger(version) && version >= 1) return version;
  throw new StorageError(
    operation,
    new Error(`a version must be a whole number >= 1, got ${String(version)}`),
  );
}

/** An option that is absent, or a whole number >= `min`. */
export function optionalWhole(name: string, value: number | undefined, min: number): number | null {
  if (value === undefined) return null;
  if (Number.isInteger(value) && value >= min) return value;
  throw new StorageError(
    "configure",
    new Error(`${name} must be a whole number >= ${min}, got ${String(value)}`),
  );
}

/** A thread id every store can key and index: a string of at most `MAX_ID_LENGTH`, well-formed. */
export function requireThreadId(operation: string, threadId: unknown): void {
  requireId(operation, "threadId", threadId);
}

/** A user id, when there is one, is checked like a thread id. */
export function requireUserId(operation: string, userId: unknown): void {
  if (userId !== null && userId !== undefined) requireId(operation, "userId", userId);
}

export function requireId(operation: string, name: string, value: unknown): void {
  if (typeof value !== "string") {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    throw new StorageError(operation, new Error(`${name} must be a string, got ${got}`));
  }
  if (value.length > MAX_ID_LENGTH) {
    const why = `${name} is ${value.length} characters long; the limit is ${MAX_ID_LENGTH}`;
    throw new StorageError(operation, new Error(why));
  }
  requireWellFormed(operation, { [name]: value });
}

/**
 * A page in whole numbers: `NaN` and negative values are 0 (as for `slice`), fractions are
 * floored, `Infinity` is no limit (or, as an offset, past every row).
 */
export function wholePage(page: { offset?: number; limit?: number }): Page {
  const { offset = 0, limit = Infinity } = page;
  return {
    offset: offset === Infinity ? Number.MAX_SAFE_INTEGER : whole(offset),
    limit: limit === Infinity ? null : whole(limit),
  };
}

function whole(value: number): number {
  return Number.isFinite(value) ? Math.max(0, Math.floor(value)) : 0;
}

/** What an operation on a closed store throws. */
export function closedError(operation: string): StorageError {
  return new StorageError(operation, new Error("checkpointer is closed"));
}
