import type { Store } from "@tenxgraph/core/store";
import type { FileStore } from "./file-store.js";
import type { MemoryStore } from "./memory-store.js";

/** What the store and file routes work with. */
export interface StorageContext {
  /** The long-term store the graph's nodes and tools use (`/v1/store/items`, LangGraph's). */
  store: Store;
  /** `/v1/store/memories`: by default over `store`. */
  memory: MemoryStore;
  files: FileStore;
}
