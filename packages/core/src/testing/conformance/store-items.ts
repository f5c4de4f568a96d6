import type { Store } from "../../store/store.js";
import { codeOf, freshRoot, type GetStore } from "./store-fixtures.js";
import type { TestApi } from "./test-api.js";

/** Items: put, get, delete, copies, times, refused input, another connection. */
export function storeItemsConformance(
  get: GetStore,
  test: TestApi,
  peer: ((store: Store) => Promise<Store>) | undefined,
): void {
  const { describe, it, expect } = test;
  describe("store items", () => {
    it("puts, gets, replaces and deletes an item", async () => {
      const store = await get();
      const ns = [freshRoot(), "prefs"];
      expect(await store.get(ns, "theme")).toBeNull();
      await store.put(ns, "theme", { color: "blue", sizes: [1, 2], nested: { a: null } });
      const first = await store.get(ns, "theme");
      expect(first).toMatchObject({
        namespace: ns,
        key: "theme",
        value: { color: "blue", sizes: [1, 2], nested: { a: null } },
      });
      expect(first!.createdAt.getTime()).toBe(first!.updatedAt.getTime());
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.put(ns, "theme", { color: "green" });
      const second = await store.get(ns, "theme");
      expect(second!.value).toEqual({ color: "green" });
      expect(second!.createdAt.getTime()).toBe(first!.createdAt.getTime());
      expect(second!.updatedAt.getTime()).toBeGreaterThan(first!.updatedAt.getTime());
      await store.delete(ns, "theme");
      expect(await store.get(ns, "theme")).toBeNull();
      await store.delete(ns, "theme"); // deleting what is gone is fine
    });

    it("keeps a namespace and key apart from their neighbours", async () => {
      const store = await get();
      const root = freshRoot();
      await store.put([root, "a"], "k", { n: 1 });
      await store.put([root, "a", "b"], "k", { n: 2 });
      await store.put([root, "ab"], "k", { n: 3 });
      expect((await store.get([root, "a"], "k"))!.value).toEqual({ n: 1 });
      expect((await store.get([root, "a", "b"], "k"))!.value).toEqual({ n: 2 });
      expect(await store.get([root], "k")).toBeNull();
      expect(await store.get([root, "a"], "K")).toBeNull();
    });

    it("keeps keys, labels and values of any well-formed Unicode exactly", async () => {
      const store = await get();
      const ns = [freshRoot(), "ünï 🙂", "a b/c%_*"];
      const value = { text: "naïve 🙂 \u2028 'quote' \"dq\" \\", zero: 0, neg: -1.5, t: true };
      await store.put(ns, "ключ 🔑%_", value);
      expect((await store.get(ns, "ключ 🔑%_"))!.value).toEqual(value);
      expect((await store.search([ns[0]!, "ünï 🙂"])).map((i) => i.key)).toEqual(["ключ 🔑%_"]);
    });

    it("copies values in and out", async () => {
      const store = await get();
      const ns = [freshRoot()];
      const value = { list: [1] };
      await store.put(ns, "k", value);
      value.list.push(2);
      const read = await store.get(ns, "k");
      expect(read!.value).toEqual({ list: [1] });
      (read!.value.list as number[]).push(3);
      expect((await store.get(ns, "k"))!.value).toEqual({ list: [1] });
    });

    it("refuses bad input with STORE_002 and writes nothing", async () => {
      const store = await get();
      const root = freshRoot();
      const refused: [string, () => Promise<unknown>][] = [
        ["empty namespace", () => store.put([], "k", { a: 1 })],
        ["empty label", () => store.put([root, ""], "k", { a: 1 })],
        ["dot in label", () => store.put([root, "a.b"], "k", { a: 1 })],
        ["reserved root", () => store.put(["langgraph", root], "k", { a: 1 })],
        ["label not a string", () => store.put([root, 1 as never], "k", { a: 1 })],
        ["empty key", () => store.put([root], "", { a: 1 })],
        ["lone surrogate key", () => store.put([root], "\ud800", { a: 1 })],
        ["NUL in label", () => store.put([root, "a\u0000"], "k", { a: 1 })],
        ["array value", () => store.put([root], "k", [1] as never)],
        ["null value", () => store.put([root], "k", null as never)],
        ["BigInt in value", () => store.put([root], "k", { n: 1n })],
        ["bad index", () => store.put([root], "k", { a: 1 }, "text" as never)],
        ["get with no namespace", () => store.get([], "k")],
        ["limit 0", () => store.search([root], { limit: 0 })],
        ["negative offset", () => store.search([root], { offset: -1 })],
        ["query without index", () => store.search([root], { query: "hi" })],
        ["maxDepth 0", () => store.listNamespaces({ maxDepth: 0 })],
      ];
      for (const [what, call] of refused) expect(await codeOf(call()), what).toBe("STORE_002");
      expect(await store.search([root])).toEqual([]);
      expect(await store.listNamespaces({ prefix: [root] })).toEqual([]);
    });

    it("shows a put on one connection to another", async () => {
      if (!peer) return;
      const store = await get();
      const other = await peer(store);
      const ns = [freshRoot()];
      await store.put(ns, "k", { from: "one" });
      expect((await other.get(ns, "k"))!.value).toEqual({ from: "one" });
      await other.put(ns, "k", { from: "two" });
      expect((await store.get(ns, "k"))!.value).toEqual({ from: "two" });
      await other.delete(ns, "k");
      expect(await store.get(ns, "k")).toBeNull();
    });
  });
}
