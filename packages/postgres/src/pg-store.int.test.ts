import * as vitest from "vitest";
import { silentLogger } from "@tenxgraph/core";
import { storeConformance } from "@tenxgraph/core/testing";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { PgStore } from "./index.js";
import { dropSchema, freshSchema } from "./support/pg-store.js";

// The one suite every long-term store passes, on a real PostgreSQL; two stores on one schema
// stand for two workers.
const schema = freshSchema("store_conformance");
const open = (options = {}) =>
  new PgStore({ postgresDsn: testPostgresDsn(), schema, logger: silentLogger, ...options });

storeConformance(
  {
    name: "PgStore",
    create: async (options) => open(options),
    peer: async () => open(),
    destroy: (store) => (store as PgStore).close(),
    afterAll: () => dropSchema(testPostgresDsn(), schema),
  },
  vitest,
);
