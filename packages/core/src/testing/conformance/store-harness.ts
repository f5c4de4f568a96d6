import type { BaseStoreOptions } from "../../store/base-store.js";
import type { Store } from "../../store/store.js";

/**
 * How the store conformance suite gets a store. `create` runs before every test (with an
 * `index` for the semantic-search tests) and `destroy` after it. Tests write under namespaces of
 * their own (a fresh first label), so every `create` may return a store over the same database.
 */
export interface StoreHarness {
  name: string;
  create(options: BaseStoreOptions): Promise<Store>;
  destroy?(store: Store): Promise<void>;
  /** Another connection to the same database as `store` (destroyed with `destroy`). */
  peer?(store: Store): Promise<Store>;
  beforeAll?(): Promise<void>;
  afterAll?(): Promise<void>;
}
