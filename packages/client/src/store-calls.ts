import type { CallOptions, HttpTransport } from "./http-transport.js";

/**
 * An item of the long-term store as the server answers it. Its namespace is as the caller sees
 * it: the server keeps a user's items under `[userId, ...namespace]`, and a node reaches them
 * there (`ctx.store.get([ctx.userId, ...namespace], key)`).
 */
export interface StoreItemWire {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  /** Cosine similarity to a search's `query`, when one was given and the item has vectors. */
  score?: number;
}

/** Options of {@link StoreCalls.searchItems}. */
export interface StoreSearchOptions extends CallOptions {
  /** Top-level fields of the value: equal JSON, or `{ $gt: 3 }` and the like. */
  filter?: Record<string, unknown>;
  limit?: number;
  offset?: number;
  /** Rank by similarity to this text (the server's store needs an `index`). */
  query?: string;
}

/** Options of {@link StoreCalls.listNamespaces}. */
export interface StoreNamespaceOptions extends CallOptions {
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit?: number;
  offset?: number;
}

/**
 * The server's long-term store, the one its graph's nodes and tools use as `ctx.store`
 * (`/v1/store/items`, `/v1/store/namespaces`); every call sees the authenticated user's items.
 *
 * @example
 * await client.store.putItem(["prefs"], "theme", { color: "blue" });
 * const item = await client.store.getItem(["prefs"], "theme"); // item?.value.color === "blue"
 */
export class StoreCalls {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** The item, or `null` when there is none. */
  async getItem(
    namespace: string[],
    key: string,
    options: CallOptions = {},
  ): Promise<StoreItemWire | null> {
    const params = new URLSearchParams({ namespace: namespace.join("."), key });
    const data = await this.#http.json<{ item: StoreItemWire | null }>({
      method: "GET",
      path: `/v1/store/items?${params.toString()}`,
      signal: options.signal,
    });
    return data.item;
  }

  /** Writes the item; `index`: `false` not to embed it, or the fields to embed. */
  async putItem(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    options: CallOptions & { index?: false | string[] } = {},
  ): Promise<void> {
    const body = {
      namespace,
      key,
      value,
      ...(options.index === undefined ? {} : { index: options.index }),
    };
    await this.#http.json({ method: "PUT", path: "/v1/store/items", body, signal: options.signal });
  }

  /** Deletes the item (nothing happens when there is none). */
  async deleteItem(namespace: string[], key: string, options: CallOptions = {}): Promise<void> {
    await this.#http.json({
      method: "DELETE",
      path: "/v1/store/items",
      body: { namespace, key },
      signal: options.signal,
    });
  }

  /** Items under `namespacePrefix` (`[]`: all of the user's), newest first or best match first. */
  async searchItems(
    namespacePrefix: string[],
    options: StoreSearchOptions = {},
  ): Promise<StoreItemWire[]> {
    const { signal, ...search } = options;
    const data = await this.#http.json<{ items: StoreItemWire[] }>({
      method: "POST",
      path: "/v1/store/items/search",
      body: { namespace_prefix: namespacePrefix, ...search },
      signal,
    });
    return data.items;
  }

  /** The user's namespaces that hold items. */
  async listNamespaces(options: StoreNamespaceOptions = {}): Promise<string[][]> {
    const { signal, maxDepth, ...rest } = options;
    const data = await this.#http.json<{ namespaces: string[][] }>({
      method: "POST",
      path: "/v1/store/namespaces",
      body: { ...rest, ...(maxDepth === undefined ? {} : { max_depth: maxDepth }) },
      signal,
    });
    return data.namespaces;
  }
}
