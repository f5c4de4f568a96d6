import { uuidv7 } from "@tenxgraph/core/host";
import { InMemoryStore, userNamespace } from "@tenxgraph/core/store";
import type { Store, StoreItem, StoreValue } from "@tenxgraph/core/store";

/** One memory, as `MemoryResult` reads on the wire. */
export interface MemoryRecord {
  id: string;
  content: string;
  memory_type: string;
  category: string;
  metadata: Record<string, unknown>;
  user_id: string;
  thread_id: string | null;
  timestamp: string;
}

/** What a search or forget matches on; every given field must match. */
export interface MemoryFilter {
  memory_type?: string | undefined;
  category?: string | undefined;
  filters?: Record<string, unknown> | undefined;
}

/**
 * The memory store behind `/v1/store/*`. Every method takes the owner's id: a user sees and
 * changes only their own memories, whatever the request says.
 */
export interface MemoryStore {
  put(userId: string, memory: Omit<MemoryRecord, "id" | "user_id" | "timestamp">): Promise<string>;
  get(userId: string, id: string): Promise<MemoryRecord | null>;
  search(
    userId: string,
    query: string,
    filter: MemoryFilter,
    limit: number,
  ): Promise<(MemoryRecord & { score: number })[]>;
  list(userId: string, limit: number): Promise<MemoryRecord[]>;
  update(
    userId: string,
    id: string,
    content: string,
    metadata?: Record<string, unknown>,
  ): Promise<boolean>;
  delete(userId: string, id: string): Promise<boolean>;
  forget(userId: string, filter: MemoryFilter): Promise<number>;
}

/** Where a user's memories sit in the store: `userNamespace(userId, "memories")`, by id. */
export const MEMORY_LABEL = "memories";

/** A memory as the store keeps it (the user and id are its namespace and key). */
type StoredMemory = Omit<MemoryRecord, "id" | "user_id">;

/** The most items one read of a page asks the store for (its largest `limit`). */
const PAGE = 1000;

/**
 * The {@link MemoryStore} of `/v1/store/memories` over the long-term store the graph uses: a
 * user's memories are items under `userNamespace(userId, "memories")`, so nodes read and
 * write them too (their `content` is the text).
 * Search scores by shared words.
 */
export class StoreMemories implements MemoryStore {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  async put(
    userId: string,
    memory: Omit<MemoryRecord, "id" | "user_id" | "timestamp">,
  ): Promise<string> {
    const id = uuidv7();
    const stored: StoredMemory = { ...memory, timestamp: new Date().toISOString() };
    await this.#store.put(userNamespace(userId, MEMORY_LABEL), id, stored as unknown as StoreValue);
    return id;
  }

  async get(userId: string, id: string): Promise<MemoryRecord | null> {
    const item = await this.#store.get(userNamespace(userId, MEMORY_LABEL), id);
    return item && isMemory(item) ? recordOf(userId, item) : null;
  }

  async search(userId: string, query: string, filter: MemoryFilter, limit: number) {
    const words = tokens(query);
    return (await this.#owned(userId))
      .filter((r) => matches(r, filter))
      .map((r) => {
        const have = new Set(tokens(r.content));
        const score = words.length ? words.filter((w) => have.has(w)).length / words.length : 0;
        return { ...r, score };
      })
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }

  async list(userId: string, limit: number): Promise<MemoryRecord[]> {
    return (await this.#owned(userId)).slice(0, limit);
  }

  async update(userId: string, id: string, content: string, metadata?: Record<string, unknown>) {
    const record = await this.get(userId, id);
    if (!record) return false;
    const { id: _id, user_id: _user, ...stored } = record;
    stored.content = content;
    if (metadata) stored.metadata = { ...stored.metadata, ...metadata };
    await this.#store.put(userNamespace(userId, MEMORY_LABEL), id, stored as unknown as StoreValue);
    return true;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    if (!(await this.get(userId, id))) return false;
    await this.#store.delete(userNamespace(userId, MEMORY_LABEL), id);
    return true;
  }

  async forget(userId: string, filter: MemoryFilter): Promise<number> {
    const gone = (await this.#owned(userId)).filter((r) => matches(r, filter));
    for (const r of gone) await this.#store.delete(userNamespace(userId, MEMORY_LABEL), r.id);
    return gone.length;
  }

  /** The user's memories, oldest first (ids are UUIDv7, so in the order they were made). */
  async #owned(userId: string): Promise<MemoryRecord[]> {
    const items: StoreItem[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.#store.search(userNamespace(userId, MEMORY_LABEL), {
        limit: PAGE,
        offset,
      });
      items.push(...page.filter((item) => item.namespace.length === 2 && isMemory(item)));
      if (page.length < PAGE) break;
    }
    return items
      .map((item) => recordOf(userId, item))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}

/** A {@link MemoryStore} in this process's memory (over its own `InMemoryStore`). */
export class InMemoryMemoryStore extends StoreMemories {
  constructor() {
    super(new InMemoryStore());
  }
}

/** An item a node wrote there need not be a memory: only those with text content are. */
function isMemory(item: StoreItem): boolean {
  return typeof item.value.content === "string";
}

function recordOf(userId: string, item: StoreItem): MemoryRecord {
  const stored = item.value as unknown as StoredMemory;
  return { ...stored, id: item.key, user_id: userId };
}

function tokens(text: string): string[] {
  return text.toLowerCase().split(/\W+/).filter(Boolean);
}

function matches(record: MemoryRecord, filter: MemoryFilter): boolean {
  if (filter.memory_type && record.memory_type !== filter.memory_type) return false;
  if (filter.category && record.category !== filter.category) return false;
  return Object.entries(filter.filters ?? {}).every(
    ([key, value]) => JSON.stringify(record.metadata[key]) === JSON.stringify(value),
  );
}
