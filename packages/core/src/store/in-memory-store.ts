import { jsonCopy } from "../storage/json-copy.js";
import { BaseStore, compareNamespaces, isUnder } from "./base-store.js";
import type { BaseStoreOptions, ScanPage, StoreRow, StoreRowWrite } from "./base-store.js";
import type { StoreItem } from "./store.js";

interface Entry extends StoreRow {
  /** Write order: the newest write has the highest. */
  seq: number;
}

/**
 * A {@link Store} in this process's memory, gone when it exits: for tests and development.
 * Values are copied in and out, so a caller's later change to an object does not reach it.
 *
 * @example
 * const store = new InMemoryStore({ index: { embed: myEmbed, dims: 256, fields: ["text"] } });
 * const app = graph.compile({ checkpointer, store });
 */
export class InMemoryStore extends BaseStore {
  readonly #items = new Map<string, Entry>();
  #seq = 0;

  constructor(options: BaseStoreOptions = {}) {
    super(options);
  }

  protected async readItem(namespace: string[], key: string): Promise<StoreItem | null> {
    const entry = this.#items.get(id(namespace, key));
    return entry ? copy(entry, false) : null;
  }

  protected async writeItem(write: StoreRowWrite): Promise<void> {
    const now = new Date();
    const before = this.#items.get(id(write.namespace, write.key));
    this.#items.set(id(write.namespace, write.key), {
      namespace: [...write.namespace],
      key: write.key,
      value: jsonCopy(write.value),
      vectors: write.vectors,
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
      seq: ++this.#seq,
    });
  }

  protected async removeItem(namespace: string[], key: string): Promise<void> {
    this.#items.delete(id(namespace, key));
  }

  protected async scanItems(
    prefix: string[],
    page: ScanPage,
    withVectors: boolean,
  ): Promise<StoreRow[]> {
    const found = [...this.#items.values()]
      .filter((entry) => isUnder(entry.namespace, prefix))
      .sort((a, b) => b.seq - a.seq);
    const kept = page ? found.slice(page.offset, page.offset + page.limit) : found;
    return kept.map((entry) => copy(entry, withVectors));
  }

  protected async namespacesUnder(prefix: string[]): Promise<string[][]> {
    const seen = new Map<string, string[]>();
    for (const entry of this.#items.values()) {
      if (isUnder(entry.namespace, prefix)) seen.set(entry.namespace.join("."), entry.namespace);
    }
    return [...seen.values()].map((ns) => [...ns]).sort(compareNamespaces);
  }
}

/** Labels cannot hold `.`, so `namespace.key` names one item (the key may hold anything). */
function id(namespace: string[], key: string): string {
  return `${namespace.join(".")}\u0000${key}`;
}

function copy(entry: Entry, withVectors: boolean): StoreRow {
  return {
    namespace: [...entry.namespace],
    key: entry.key,
    value: jsonCopy(entry.value),
    createdAt: new Date(entry.createdAt),
    updatedAt: new Date(entry.updatedAt),
    vectors: withVectors ? entry.vectors : [],
  };
}
