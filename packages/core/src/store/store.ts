/** A JSON object: what the store keeps under a key. */
export type StoreValue = Record<string, unknown>;

/** One value in the store, with where it sits and when it was written. */
export interface StoreItem {
  /** Its namespace: one or more labels, e.g. `["alice", "prefs"]`. */
  namespace: string[];
  key: string;
  value: StoreValue;
  createdAt: Date;
  updatedAt: Date;
}

/** An item found by `search`: `score` is its cosine similarity to `query`, when one was given. */
export interface StoreSearchItem extends StoreItem {
  score?: number;
}

/**
 * A filter on top-level fields of the value: a plain value matches an equal JSON value, an
 * object of operators (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$in`, `$nin`) compares.
 */
export type StoreFilter = Record<string, unknown>;

/** Options of {@link Store.search}. */
export interface StoreSearchOptions {
  filter?: StoreFilter;
  /** At most this many items (default 10, 1 to 1000). */
  limit?: number;
  /** Skip this many (default 0). */
  offset?: number;
  /** Rank by cosine similarity to this text; needs the store's `index`. */
  query?: string;
}

/** Options of {@link Store.listNamespaces}; `"*"` in `prefix` or `suffix` matches any label. */
export interface ListNamespacesOptions {
  prefix?: string[];
  suffix?: string[];
  /** Cut longer namespaces to this many labels (and list each cut once). */
  maxDepth?: number;
  /** Default 100, 1 to 1000. */
  limit?: number;
  offset?: number;
}

/** Embeds texts: one vector of `dims` numbers per text, in order. */
export type EmbedTexts = (texts: string[], signal?: AbortSignal) => Promise<number[][]>;

/**
 * The part of an AI SDK embedding model (`openai.embedding("text-embedding-3-small")`, the
 * `EmbeddingModel` of `ai` v6) the store calls: `doEmbed`, in batches of
 * `maxEmbeddingsPerCall`. For the AI SDK's retries, pass a function calling `embedMany`.
 */
export interface EmbeddingModelLike {
  readonly specificationVersion: string;
  readonly modelId: string;
  readonly maxEmbeddingsPerCall: PromiseLike<number | undefined> | number | undefined;
  doEmbed(options: {
    values: string[];
    abortSignal?: AbortSignal;
  }): PromiseLike<{ embeddings: number[][] }>;
}

/** Semantic search: how the store embeds values and queries. */
export interface StoreIndex {
  /** An AI SDK embedding model, or a function that embeds texts. */
  embed: EmbedTexts | EmbeddingModelLike;
  /** The length of every vector. */
  dims: number;
  /**
   * The fields of a value to embed (`"text"`, `"profile.bio"`, `"tags[*]"`); each text found
   * gets a vector, and an item scores by its best one. Default `["$"]`: the whole value as JSON.
   */
  fields?: string[];
}

/**
 * Long-term memory shared across threads: JSON values under a namespace and a key, as
 * LangGraph's `BaseStore`. A graph gets it through `compile({ store })`, its nodes and tools as
 * `ctx.store`, and the server serves the same store over HTTP.
 *
 * @example
 * const store = new InMemoryStore();
 * await store.put(["alice", "prefs"], "theme", { color: "blue" });
 * (await store.get(["alice", "prefs"], "theme"))?.value; // { color: "blue" }
 */
export interface Store {
  get(namespace: string[], key: string): Promise<StoreItem | null>;
  /**
   * Writes `value` under the key (a new item, or a new value for it). `index`: `false` not to
   * embed it, or the fields to embed instead of the store's `fields`.
   */
  put(namespace: string[], key: string, value: StoreValue, index?: false | string[]): Promise<void>;
  /** Deletes the item; nothing happens when there is none. */
  delete(namespace: string[], key: string): Promise<void>;
  /**
   * Items whose namespace starts with `namespacePrefix` (`[]`: all) and whose value matches
   * `filter`: newest write first, or best `query` match first.
   */
  search(namespacePrefix: string[], options?: StoreSearchOptions): Promise<StoreSearchItem[]>;
  /** The namespaces that hold items, in label order. */
  listNamespaces(options?: ListNamespacesOptions): Promise<string[][]>;
}
