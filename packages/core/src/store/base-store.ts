import {
  namespaceOptions,
  requireIndexFields,
  requireKey,
  requireNamespace,
  requireValue,
  searchOptions,
} from "./store-checks.js";
import { Embedder, cosineSimilarity } from "./store-embedding.js";
import { StoreInputError } from "./store-errors.js";
import { matchesFilter } from "./store-filter.js";
import type {
  ListNamespacesOptions,
  Store,
  StoreIndex,
  StoreItem,
  StoreSearchItem,
  StoreSearchOptions,
  StoreValue,
} from "./store.js";

/** An item as an engine keeps it: with the vectors of its texts (`[]`: none). */
export interface StoreRow extends StoreItem {
  vectors: number[][];
}

/** What `put` hands an engine: the checked value and its vectors. */
export interface StoreRowWrite {
  namespace: string[];
  key: string;
  value: StoreValue;
  vectors: number[][];
}

/** A page of a scan; `null` reads every row. */
export type ScanPage = { limit: number; offset: number } | null;

/** Options every store takes. */
export interface BaseStoreOptions {
  /** Semantic search: embed values on `put` and rank `search({ query })` by similarity. */
  index?: StoreIndex;
}

/**
 * For store authors: LangGraph's store semantics once, over five primitives an engine
 * implements (read, write, remove, scan, namespaces). Arguments are checked here, so every
 * engine refuses the same calls with the same `STORE_002`; filters, ranking by cosine
 * similarity and namespace matching run here too, on what the engine scans.
 */
export abstract class BaseStore implements Store {
  readonly #embedder: Embedder | null;

  constructor(options: BaseStoreOptions = {}) {
    this.#embedder = options.index === undefined ? null : new Embedder(options.index);
  }

  /** The index's vector length, or `null` without semantic search. */
  protected get dims(): number | null {
    return this.#embedder?.dims ?? null;
  }

  protected abstract readItem(namespace: string[], key: string): Promise<StoreItem | null>;
  /** Inserts or replaces the item: `createdAt` stays, `updatedAt` and the write order advance. */
  protected abstract writeItem(write: StoreRowWrite): Promise<void>;
  protected abstract removeItem(namespace: string[], key: string): Promise<void>;
  /**
   * Items whose namespace is `prefix` or starts with it (`[]`: all), most recently written
   * first (then by namespace and key), `page` of them or all; vectors only if `withVectors`.
   */
  protected abstract scanItems(
    prefix: string[],
    page: ScanPage,
    withVectors: boolean,
  ): Promise<StoreRow[]>;
  /** Every namespace that holds an item and is `prefix` or starts with it. */
  protected abstract namespacesUnder(prefix: string[]): Promise<string[][]>;

  async get(namespace: string[], key: string): Promise<StoreItem | null> {
    requireNamespace("get", namespace);
    requireKey("get", key);
    return this.readItem(namespace, key);
  }

  async put(
    namespace: string[],
    key: string,
    value: StoreValue,
    index?: false | string[],
  ): Promise<void> {
    requireNamespace("put", namespace, { writing: true });
    requireKey("put", key);
    requireValue("put", value);
    requireIndexFields("put", index);
    // Embedded before the write: a failing embedding writes nothing.
    const vectors = this.#embedder ? await this.#embedder.vectorsOf(value, index) : [];
    await this.writeItem({ namespace: [...namespace], key, value, vectors });
  }

  async delete(namespace: string[], key: string): Promise<void> {
    requireNamespace("delete", namespace);
    requireKey("delete", key);
    await this.removeItem(namespace, key);
  }

  async search(
    namespacePrefix: string[],
    options?: StoreSearchOptions,
  ): Promise<StoreSearchItem[]> {
    requireNamespace("search", namespacePrefix, { allowEmpty: true });
    const { filter, limit, offset, query } = searchOptions(options);
    if (query !== undefined) {
      if (!this.#embedder) {
        throw new StoreInputError(
          "search",
          "a query needs a store made with an index ({ embed, dims })",
        );
      }
      const queryVector = await this.#embedder.queryVector(query);
      const rows = (await this.scanItems(namespacePrefix, null, true)).filter((row) =>
        matchesFilter(row.value, filter),
      );
      return rank(rows, queryVector).slice(offset, offset + limit);
    }
    if (!filter) return (await this.scanItems(namespacePrefix, { limit, offset }, false)).map(item);
    const rows = await this.scanItems(namespacePrefix, null, false);
    return rows
      .filter((row) => matchesFilter(row.value, filter))
      .slice(offset, offset + limit)
      .map(item);
  }

  async listNamespaces(options?: ListNamespacesOptions): Promise<string[][]> {
    const { prefix, suffix, maxDepth, limit, offset } = namespaceOptions(options);
    const literal = prefix ? prefix.slice(0, until(prefix, "*")) : [];
    const seen = new Map<string, string[]>();
    for (const namespace of await this.namespacesUnder(literal)) {
      if (prefix && !matchesAt(namespace, prefix, 0)) continue;
      if (suffix && !matchesAt(namespace, suffix, namespace.length - suffix.length)) continue;
      const cut = maxDepth === undefined ? namespace : namespace.slice(0, maxDepth);
      seen.set(cut.join("."), cut);
    }
    return [...seen.values()].sort(compareNamespaces).slice(offset, offset + limit);
  }
}

/** The item without its vectors. */
function item(row: StoreRow): StoreSearchItem {
  const { namespace, key, value, createdAt, updatedAt } = row;
  return { namespace, key, value, createdAt, updatedAt };
}

/** Best match first, an item scoring by its best vector; items without vectors last, unscored. */
function rank(rows: StoreRow[], queryVector: number[]): StoreSearchItem[] {
  const scored = rows
    .filter((row) => row.vectors.length > 0)
    .map((row) => ({
      ...item(row),
      score: Math.max(...row.vectors.map((v) => cosineSimilarity(queryVector, v))),
    }))
    .sort((a, b) => b.score - a.score);
  return [...scored, ...rows.filter((row) => row.vectors.length === 0).map(item)];
}

function until(labels: string[], wildcard: string): number {
  const at = labels.indexOf(wildcard);
  return at === -1 ? labels.length : at;
}

/** Whether `pattern` (with `"*"` for any label) matches `namespace` from label `start` on. */
function matchesAt(namespace: string[], pattern: string[], start: number): boolean {
  if (start < 0 || start + pattern.length > namespace.length) return false;
  return pattern.every((label, i) => label === "*" || namespace[start + i] === label);
}

/** Label by label, in code-unit order: the same on every engine. */
export function compareNamespaces(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

/** Whether `namespace` is `prefix` or lies under it. */
export function isUnder(namespace: string[], prefix: string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((label, i) => namespace[i] === label);
}
