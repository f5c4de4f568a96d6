import { TenxgraphError } from "../errors/tenxgraph-error.js";

/** `ctx.store` was used in a graph compiled without a store (`STORE_001`). */
export class StoreMissingError extends TenxgraphError {
  constructor(readonly operation: string) {
    super(
      "STORE_001",
      `ctx.store.${operation}(): this graph has no store. Compile it with one: ` +
        `compile({ checkpointer, store: new InMemoryStore() }) (from @tenxgraph/core/store), ` +
        `or SqliteStore (@tenxgraph/sqlite) or PgStore (@tenxgraph/postgres) to keep it`,
    );
  }
}

/** A store call's arguments were refused (`STORE_002`); nothing was written. */
export class StoreInputError extends TenxgraphError {
  constructor(
    readonly operation: string,
    readonly problem: string,
  ) {
    super("STORE_002", `store.${operation}(): ${problem}; nothing was written`);
  }
}

/** Embedding failed or answered vectors that do not fit the index (`STORE_003`). */
export class StoreEmbeddingError extends TenxgraphError {
  constructor(problem: string, options?: { cause?: unknown }) {
    super("STORE_003", `store embedding: ${problem}; nothing was written`, options);
  }
}
