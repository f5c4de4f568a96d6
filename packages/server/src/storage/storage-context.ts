import type { FileStore } from "./file-store.js";
import type { MemoryStore } from "./memory-store.js";

/** What the store and file routes work with. */
export interface StorageContext {
  memory: MemoryStore;
  files: FileStore;
}
