/**
 * The long-term store (`@tenxgraph/core/store`): JSON values by namespace and key, shared across
 * threads, as LangGraph's `BaseStore`. Pass one to `compile({ store })`; nodes and tools use it
 * as `ctx.store`. `InMemoryStore` is here; `SqliteStore` and `PgStore` keep it in a database.
 * Store authors extend `BaseStore` and run `storeConformance` from `@tenxgraph/core/testing`.
 * @module
 */
export type {
  EmbeddingModelLike,
  EmbedTexts,
  ListNamespacesOptions,
  Store,
  StoreFilter,
  StoreIndex,
  StoreItem,
  StoreSearchItem,
  StoreSearchOptions,
  StoreValue,
} from "./store.js";
export { InMemoryStore } from "./in-memory-store.js";
export { BaseStore, compareNamespaces } from "./base-store.js";
export type { BaseStoreOptions, ScanPage, StoreRow, StoreRowWrite } from "./base-store.js";
export { StoreEmbeddingError, StoreInputError, StoreMissingError } from "./store-errors.js";
export { ANONYMOUS_USER, userNamespace } from "./user-namespace.js";
