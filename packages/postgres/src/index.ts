/**
 * `PgCheckpointer`: tenxgraph's store for many workers on many machines. PostgreSQL holds
 * threads, versioned steps and the tool ledger durably; Redis, optionally, the hot copy.
 * @module
 */
export { PgCheckpointer } from "./pg-checkpointer.js";
export type { PgCheckpointerOptions } from "./options.js";
export { PgStore } from "./pg-store.js";
export type { PgStoreOptions } from "./pg-store.js";
export {
  applyMigrationSteps,
  createHostPool,
  hostDatabaseError,
  withMigrationLock,
} from "./connection/host-connection.js";
export type { HostPoolOptions, MigrationStep } from "./connection/host-connection.js";
