import { StoreInputError } from "../../store/store-errors.js";
import { hashEmbedding } from "./hash-embedding.js";
import { codeOf, freshRoot, TEST_INDEX, type GetStore } from "./store-fixtures.js";
import type { TestApi } from "./test-api.js";

/** Semantic search with a deterministic embedding: ranking, fields, filters, failures. */
export function storeSemanticConformance(get: GetStore, test: TestApi): void {
  const { describe, it, expect } = test;
  describe("store semantic search", () => {
    it("ranks by cosine similarity to the query, best first, with scores", async () => {
      const store = await get({ index: TEST_INDEX });
      const ns = [freshRoot(), "memories"];
      await store.put(ns, "tea", { text: "likes green tea in the morning" });
      await store.put(ns, "cat", { text: "has a cat named Tom" });
      await store.put(ns, "oslo", { text: "lives in Oslo" });
      const found = await store.search(ns, { query: "what tea does the user like" });
      expect(found.map((item) => item.key)[0]).toBe("tea");
      expect(found).toHaveLength(3);
      for (const item of found) {
        expect(item.score! <= 1 && item.score! >= -1, "score in [-1, 1]").toBe(true);
      }
      expect(found[0]!.score!).toBeGreaterThan(found[1]!.score!);
      const cat = await store.search(ns, { query: "cat Tom", limit: 1 });
      expect(cat.map((item) => item.key)).toEqual(["cat"]);
      const second = await store.search(ns, { query: "cat Tom", limit: 1, offset: 1 });
      expect(second).toHaveLength(1);
      expect(second[0]!.key === "cat").toBe(false);
    });

    it("embeds the index's fields or put's, and ranks items without vectors last", async () => {
      const store = await get({ index: TEST_INDEX });
      const ns = [freshRoot()];
      await store.put(ns, "by-text", { text: "sailing boats", title: "cooking" });
      await store.put(ns, "by-title", { text: "cooking", title: "sailing boats" }, ["title"]);
      await store.put(ns, "none", { text: "sailing boats" }, false);
      await store.put(ns, "no-text", { title: "sailing boats" });
      const found = await store.search(ns, { query: "sailing boats" });
      expect(
        found
          .slice(0, 2)
          .map((i) => i.key)
          .sort(),
      ).toEqual(["by-text", "by-title"]);
      expect(found[0]!.score!).toBeGreaterThan(0.99);
      expect(
        found
          .slice(2)
          .map((i) => i.key)
          .sort(),
      ).toEqual(["no-text", "none"]);
      expect(found[3]!.score).toBe(undefined);
    });

    it("filters before ranking, and scores by an item's best text", async () => {
      const index = { ...TEST_INDEX, fields: ["notes[*]"] };
      const store = await get({ index });
      const ns = [freshRoot()];
      await store.put(ns, "a", { kind: "x", notes: ["red apples", "blue sky"] });
      await store.put(ns, "b", { kind: "y", notes: ["blue sky"] });
      await store.put(ns, "c", { kind: "x", notes: ["green grass"] });
      const found = await store.search(ns, { query: "blue sky", filter: { kind: "x" } });
      expect(found.map((i) => i.key)).toEqual(["a", "c"]);
      expect(found[0]!.score!).toBeGreaterThan(0.99);
    });

    it("fails with STORE_003 when embedding fails or answers wrongly, and writes nothing", async () => {
      const failing = await get({
        index: {
          dims: 8,
          embed: async () => {
            throw new Error("provider down");
          },
        },
      });
      const ns = [freshRoot()];
      expect(await codeOf(failing.put(ns, "k", { text: "x" }))).toBe("STORE_003");
      expect(await codeOf(failing.search(ns, { query: "x" }))).toBe("STORE_003");
      const short = await get({ index: { dims: 8, embed: hashEmbedding(4) } });
      expect(await codeOf(short.put(ns, "k", { text: "x" }))).toBe("STORE_003");
      expect(await failing.get(ns, "k")).toBeNull();
    });

    it("embeds with an AI SDK embedding model, in batches of its maxEmbeddingsPerCall", async () => {
      const batches: number[] = [];
      const embed = hashEmbedding(16);
      const model = {
        specificationVersion: "v3",
        modelId: "test-embedding",
        maxEmbeddingsPerCall: 2,
        async doEmbed({ values }: { values: string[] }) {
          batches.push(values.length);
          return { embeddings: await embed(values) };
        },
      };
      const store = await get({ index: { embed: model, dims: 16, fields: ["notes[*]"] } });
      const ns = [freshRoot()];
      await store.put(ns, "k", { notes: ["one", "two", "three"] });
      expect(batches).toEqual([2, 1]);
      expect((await store.search(ns, { query: "three" }))[0]!.score!).toBeGreaterThan(0.99);
    });

    it("refuses a bad index when the store is made", async () => {
      const bad = (index: unknown) => codeOf(get({ index: index as never }));
      expect(await bad({ embed: hashEmbedding(4), dims: 0 })).toBe("STORE_002");
      expect(await bad({ embed: "model-name", dims: 4 })).toBe("STORE_002");
      expect(await bad({ embed: hashEmbedding(4), dims: 4, fields: [""] })).toBe("STORE_002");
      expect(new StoreInputError("x", "y").code).toBe("STORE_002");
    });
  });
}
