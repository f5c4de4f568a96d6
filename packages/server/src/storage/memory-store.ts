import { uuidv7 } from "@tenxgraph/core/host";

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

/** A {@link MemoryStore} in this process's memory; search scores by shared words. */
export class InMemoryMemoryStore implements MemoryStore {
  readonly #records = new Map<string, MemoryRecord>();

  async put(
    userId: string,
    memory: Omit<MemoryRecord, "id" | "user_id" | "timestamp">,
  ): Promise<string> {
    const id = uuidv7();
    this.#records.set(id, { ...memory, id, user_id: userId, timestamp: new Date().toISOString() });
    return id;
  }

  async get(userId: string, id: string): Promise<MemoryRecord | null> {
    const record = this.#records.get(id);
    return record && record.user_id === userId ? structuredClone(record) : null;
  }

  async search(userId: string, query: string, filter: MemoryFilter, limit: number) {
    const words = tokens(query);
    return this.#owned(userId)
      .filter((r) => matches(r, filter))
      .map((r) => {
        const have = new Set(tokens(r.content));
        const score = words.length ? words.filter((w) => have.has(w)).length / words.length : 0;
        return { ...structuredClone(r), score };
      })
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }

  async list(userId: string, limit: number): Promise<MemoryRecord[]> {
    return this.#owned(userId)
      .slice(0, limit)
      .map((r) => structuredClone(r));
  }

  async update(userId: string, id: string, content: string, metadata?: Record<string, unknown>) {
    const record = this.#records.get(id);
    if (!record || record.user_id !== userId) return false;
    record.content = content;
    if (metadata) record.metadata = { ...record.metadata, ...metadata };
    return true;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const record = this.#records.get(id);
    return record?.user_id === userId ? this.#records.delete(id) : false;
  }

  async forget(userId: string, filter: MemoryFilter): Promise<number> {
    const gone = this.#owned(userId).filter((r) => matches(r, filter));
    for (const r of gone) this.#records.delete(r.id);
    return gone.length;
  }

  #owned(userId: string): MemoryRecord[] {
    return [...this.#records.values()].filter((r) => r.user_id === userId);
  }
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
