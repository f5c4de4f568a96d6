/**
 * `SqliteCheckpointer`: tenxgraph's embedded default store, one SQLite file with versioned
 * writes and the full tool ledger, safe for several processes on one machine.
 * @module
 */
export { SqliteCheckpointer, DEFAULT_SQLITE_PATH } from "./sqlite-checkpointer.js";
export type { SqliteCheckpointerOptions } from "./sqlite-checkpointer.js";
export { SqliteStore } from "./sqlite-store.js";
export type { SqliteStoreOptions } from "./sqlite-store.js";
