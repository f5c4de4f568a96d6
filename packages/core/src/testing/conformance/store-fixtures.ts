import { randomUUID } from "node:crypto";
import type { BaseStoreOptions } from "../../store/base-store.js";
import type { Store } from "../../store/store.js";
import { hashEmbedding } from "./hash-embedding.js";

/** The current test's store, made with `options`. */
export type GetStore = (options?: BaseStoreOptions) => Promise<Store>;

/** A namespace root no other test uses. */
export function freshRoot(): string {
  return `t-${randomUUID()}`;
}

/** The error code a promise rejects with (`"none"` when it resolves). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "none";
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
}

/** The index the semantic tests use: words hashed into 64 dimensions. */
export const TEST_INDEX = { embed: hashEmbedding(64), dims: 64, fields: ["text"] };
