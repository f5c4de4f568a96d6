import { freshRoot, type GetStore } from "./store-fixtures.js";
import type { TestApi } from "./test-api.js";

/** Search without a query (prefix, order, pages, filters) and namespace listings. */
export function storeQueriesConformance(get: GetStore, test: TestApi): void {
  const { describe, it, expect } = test;
  describe("store search and namespaces", () => {
    it("searches under a prefix, label by label, newest write first, in pages", async () => {
      const store = await get();
      const root = freshRoot();
      await store.put([root, "a"], "one", { n: 1 });
      await store.put([root, "a", "deep"], "two", { n: 2 });
      await store.put([root, "ab"], "three", { n: 3 });
      await store.put([root, "a"], "four", { n: 4 });
      await store.put([root, "a"], "one", { n: 5 }); // rewritten: now the newest
      const keys = async (prefix: string[], options = {}) =>
        (await store.search(prefix, options)).map((item) => item.key);
      expect(await keys([root, "a"])).toEqual(["one", "four", "two"]);
      expect(await keys([root])).toEqual(["one", "four", "three", "two"]);
      expect(await keys([root, "a"], { limit: 2 })).toEqual(["one", "four"]);
      expect(await keys([root, "a"], { limit: 2, offset: 2 })).toEqual(["two"]);
      expect(await keys([root, "a"], { offset: 5 })).toEqual([]);
      expect(await keys([root, "a", "deep"])).toEqual(["two"]);
      expect(await keys([root, "b"])).toEqual([]);
      const [item] = await store.search([root, "a", "deep"]);
      expect(item).toMatchObject({ namespace: [root, "a", "deep"], key: "two", value: { n: 2 } });
      expect(item!.score).toBe(undefined);
      expect((await store.search([])).length).toBeGreaterThan(0);
    });

    it("filters on values: equal JSON, and $eq $ne $gt $gte $lt $lte $in $nin", async () => {
      const store = await get();
      const ns = [freshRoot()];
      await store.put(ns, "a", { kind: "note", n: 1, tags: ["x", "y"], meta: { by: "al", at: 1 } });
      await store.put(ns, "b", { kind: "note", n: 5, tags: ["y"] });
      await store.put(ns, "c", { kind: "todo", n: 10, name: "m" });
      const keys = async (filter: Record<string, unknown>, options = {}) =>
        (await store.search(ns, { filter, ...options })).map((item) => item.key).sort();
      expect(await keys({ kind: "note" })).toEqual(["a", "b"]);
      expect(await keys({ kind: "note", n: 5 })).toEqual(["b"]);
      expect(await keys({ tags: ["x", "y"] })).toEqual(["a"]);
      expect(await keys({ tags: ["y", "x"] })).toEqual([]);
      expect(await keys({ meta: { at: 1, by: "al" } })).toEqual(["a"]);
      expect(await keys({ kind: { $eq: "todo" } })).toEqual(["c"]);
      expect(await keys({ kind: { $ne: "todo" } })).toEqual(["a", "b"]);
      expect(await keys({ n: { $gt: 1 } })).toEqual(["b", "c"]);
      expect(await keys({ n: { $gte: 1, $lt: 10 } })).toEqual(["a", "b"]);
      expect(await keys({ n: { $lte: 5 } })).toEqual(["a", "b"]);
      expect(await keys({ n: { $in: [1, 10] } })).toEqual(["a", "c"]);
      expect(await keys({ n: { $nin: [1, 10] } })).toEqual(["b"]);
      expect(await keys({ name: { $gt: "a" } })).toEqual(["c"]);
      expect(await keys({ missing: "x" })).toEqual([]);
      expect(await keys({ kind: "note" }, { limit: 1, offset: 1 })).toHaveLength(1);
      const paged = await store.search(ns, { filter: { kind: "note" }, limit: 1, offset: 1 });
      expect(paged.map((item) => item.key)).toEqual(["a"]); // newest first: b, then a
    });

    it("lists namespaces by prefix, suffix and wildcard, cut to a depth, in pages", async () => {
      const store = await get();
      const root = freshRoot();
      for (const ns of [
        [root, "users", "al", "prefs"],
        [root, "users", "bo", "prefs"],
        [root, "users", "bo", "notes"],
        [root, "docs"],
      ]) {
        await store.put(ns, "k", { a: 1 });
      }
      await store.put([root, "gone"], "k", { a: 1 });
      await store.delete([root, "gone"], "k");
      expect(await store.listNamespaces({ prefix: [root] })).toEqual([
        [root, "docs"],
        [root, "users", "al", "prefs"],
        [root, "users", "bo", "notes"],
        [root, "users", "bo", "prefs"],
      ]);
      expect(await store.listNamespaces({ prefix: [root], suffix: ["prefs"] })).toEqual([
        [root, "users", "al", "prefs"],
        [root, "users", "bo", "prefs"],
      ]);
      expect(await store.listNamespaces({ prefix: [root, "users", "*", "notes"] })).toEqual([
        [root, "users", "bo", "notes"],
      ]);
      expect(await store.listNamespaces({ prefix: [root], maxDepth: 3 })).toEqual([
        [root, "docs"],
        [root, "users", "al"],
        [root, "users", "bo"],
      ]);
      expect(await store.listNamespaces({ prefix: [root], limit: 2, offset: 1 })).toEqual([
        [root, "users", "al", "prefs"],
        [root, "users", "bo", "notes"],
      ]);
      expect(await store.listNamespaces({ prefix: [root, "nope"] })).toEqual([]);
    });
  });
}
