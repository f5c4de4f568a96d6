import { userNamespace } from "@tenxgraph/core/store";
import type { Store, StoreItem, StoreSearchItem } from "@tenxgraph/core/store";
import type { StoreItemWire } from "@tenxgraph/client";
import { z } from "zod";

/**
 * The long-term store as one user sees it over HTTP: the namespace a request names, `ns`, is
 * the store's `userNamespace(userId, ...ns)`, and answers drop the user's label again. No
 * request can name another user's items, whatever namespace it sends; a node reaches the same
 * items with `ctx.store` at `userNamespace(ctx.userId, ...ns)` (`"anonymous"` without auth).
 */

const label = z
  .string()
  .min(1)
  .refine((s) => !s.includes("."), "a namespace label has no '.'");
const namespace = z.array(label).min(1, "a namespace has at least one label");
const value = z.record(z.string(), z.unknown());

/** `PUT …/store/items`: a `null` value (LangGraph's clients) deletes. */
export const putItemSchema = z.looseObject({
  namespace,
  key: z.string().min(1),
  value: value.nullable(),
  index: z.union([z.literal(false), z.array(z.string().min(1))]).nullish(),
  ttl: z.number().nullish(),
});
/** `DELETE …/store/items`. */
export const deleteItemSchema = z.looseObject({ namespace, key: z.string().min(1) });
/** `POST …/store/items/search`. */
export const searchItemsSchema = z.looseObject({
  namespace_prefix: z.array(label).default([]),
  filter: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  query: z.string().nullish(),
});
/** `POST …/store/namespaces`. */
export const listNamespacesSchema = z.looseObject({
  prefix: z.array(label).nullish(),
  suffix: z.array(label).nullish(),
  max_depth: z.number().int().min(1).nullish(),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
});

/** An item on the wire (LangGraph's store item), as `StoreItemWire` of the client. */
export const storeItemAnswer = z.object({
  namespace: z.array(z.string()),
  key: z.string(),
  value: value,
  created_at: z.string(),
  updated_at: z.string(),
  score: z.number().optional(),
});
export type StoreItemAnswer = z.output<typeof storeItemAnswer>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only when `Check` is `true`. */
type Holds<Check extends true> = Check;
/** Compiles only while the answer's schema and the client's `StoreItemWire` say the same. */
export type StoreItemMatchesClient = Holds<Same<StoreItemAnswer, StoreItemWire>>;

/** One user's view of the store. */
export class UserItems {
  readonly #store: Store;
  readonly #userId: string;

  constructor(store: Store, userId: string) {
    this.#store = store;
    this.#userId = userId;
  }

  async get(ns: string[], key: string): Promise<StoreItemAnswer | null> {
    const item = await this.#store.get(this.#own(ns), key);
    return item ? this.#wire(item) : null;
  }

  async put(body: z.output<typeof putItemSchema>): Promise<void> {
    if (body.value === null) return this.delete(body.namespace, body.key);
    await this.#store.put(this.#own(body.namespace), body.key, body.value, body.index ?? undefined);
  }

  async delete(ns: string[], key: string): Promise<void> {
    await this.#store.delete(this.#own(ns), key);
  }

  async search(body: z.output<typeof searchItemsSchema>): Promise<StoreItemAnswer[]> {
    const found = await this.#store.search(this.#own(body.namespace_prefix), {
      filter: body.filter ?? undefined,
      limit: body.limit,
      offset: body.offset,
      query: body.query || undefined,
    });
    return found.map((item) => this.#wire(item));
  }

  async namespaces(body: z.output<typeof listNamespacesSchema>): Promise<string[][]> {
    const found = await this.#store.listNamespaces({
      prefix: this.#own(body.prefix ?? []),
      // A suffix could match into the user's label: the answer is checked again below.
      suffix: body.suffix ?? undefined,
      maxDepth: body.max_depth ? body.max_depth + 1 : undefined,
      limit: body.limit,
      offset: body.offset,
    });
    const suffix = body.suffix ?? [];
    return found
      .map((ns) => ns.slice(1))
      .filter(
        (ns) =>
          suffix.length <= ns.length &&
          suffix.every((l, i) => l === "*" || ns[ns.length - suffix.length + i] === l),
      );
  }

  #own(ns: string[]): string[] {
    return userNamespace(this.#userId, ...ns);
  }

  #wire(item: StoreSearchItem | StoreItem): StoreItemAnswer {
    return {
      namespace: item.namespace.slice(1),
      key: item.key,
      value: item.value,
      created_at: item.createdAt.toISOString(),
      updated_at: item.updatedAt.toISOString(),
      ...("score" in item && item.score !== undefined ? { score: item.score } : {}),
    };
  }
}
