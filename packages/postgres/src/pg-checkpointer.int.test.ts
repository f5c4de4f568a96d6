import * as vitest from "vitest";
import { checkpointerConformance } from "@tenxgraph/core/testing";
import { freshSchema, sharedStore } from "./support/pg-store.js";

// The one suite every checkpointer passes, unchanged: once on PostgreSQL alone, once with the
// Redis cache in front. Races run across two checkpointers, as two workers would.
for (const redis of [false, true]) {
  const schema = freshSchema(redis ? "conformance_redis" : "conformance_pg");
  checkpointerConformance(
    {
      name: redis ? "PgCheckpointer (PostgreSQL + Redis)" : "PgCheckpointer (PostgreSQL only)",
      create: async () => sharedStore(schema, { redis }),
      createWith: async (options) => sharedStore(schema, { redis, ...options }),
      peer: async () => sharedStore(schema, { redis }),
      destroy: (checkpointer) => checkpointer.close(),
    },
    vitest,
  );
}
