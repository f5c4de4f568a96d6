import type { Store } from "../../store/store.js";
import type { GetStore } from "./store-fixtures.js";
import type { StoreHarness } from "./store-harness.js";
import { storeItemsConformance } from "./store-items.js";
import { storeQueriesConformance } from "./store-queries.js";
import { storeSemanticConformance } from "./store-semantic.js";
import type { TestApi } from "./test-api.js";

/**
 * Registers the one suite every long-term store must pass (items, search and filters,
 * namespaces, refused input, semantic search), under `describe("store conformance: <name>")`.
 * Pass the test framework as `test`, as for `checkpointerConformance`.
 *
 * @example
 * storeConformance(
 *   { name: "SqliteStore", create: async (options) => new SqliteStore({ path, ...options }),
 *     destroy: (store) => (store as SqliteStore).close() },
 *   await import("vitest"),
 * );
 */
export function storeConformance(harness: StoreHarness, test: TestApi): void {
  const { describe, beforeAll, afterAll, afterEach } = test;
  describe(`store conformance: ${harness.name}`, () => {
    const opened: Store[] = [];
    const get: GetStore = async (options = {}) => {
      const store = await harness.create(options);
      opened.push(store);
      return store;
    };
    const peer = harness.peer
      ? async (store: Store) => {
          const other = await harness.peer!(store);
          opened.push(other);
          return other;
        }
      : undefined;
    if (harness.beforeAll) beforeAll(() => harness.beforeAll!());
    if (harness.afterAll) afterAll(() => harness.afterAll!());
    afterEach(async () => {
      for (const store of opened.splice(0)) await harness.destroy?.(store);
    });
    storeItemsConformance(get, test, peer);
    storeQueriesConformance(get, test);
    storeSemanticConformance(get, test);
  });
}
