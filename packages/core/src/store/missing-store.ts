import { StoreMissingError } from "./store-errors.js";
import type { Store } from "./store.js";

/**
 * `ctx.store` of a graph compiled without a store: every call fails with `STORE_001`, naming
 * the fix. An object rather than a throwing getter, so spreading or logging a context never
 * throws.
 */
export const MISSING_STORE: Store = Object.freeze({
  get: () => Promise.reject(new StoreMissingError("get")),
  put: () => Promise.reject(new StoreMissingError("put")),
  delete: () => Promise.reject(new StoreMissingError("delete")),
  search: () => Promise.reject(new StoreMissingError("search")),
  listNamespaces: () => Promise.reject(new StoreMissingError("listNamespaces")),
});
