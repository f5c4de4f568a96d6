/**
 * Setup run concurrently: replicas starting together on an empty database each create or
 * migrate the runs' tables, graphile-worker's schema and the threads' schema at the same moment,
 * and every one of them succeeds.
 */
import { silentLogger } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { PgRunStore } from "@tenxgraph/server";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { describe, expect, it } from "vitest";

/** Replicas per database, each with pools of its own, as separate processes have. */
const REPLICAS = 8;

describe("setup by many replicas at once", () => {
  it.each([1, 2, 3])(
    "run stores and checkpointers set up fresh database %i together",
    async (n) => {
      const dsn = await freshDatabase(`setup_at_once_${n}`);
      const stores = Array.from({ length: REPLICAS }, () => new PgRunStore({ postgresDsn: dsn }));
      const checkpointers = Array.from(
        { length: REPLICAS },
        () => new PgCheckpointer({ postgresDsn: dsn, schema: "threads", logger: silentLogger }),
      );
      try {
        const outcomes = await Promise.allSettled([
          ...stores.map((s) => s.setup()),
          ...checkpointers.map((c) => c.setup()),
        ]);
        const failures = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
        expect(failures).toEqual([]);
        // Set up once: one version row each, and the queue's own migrations applied.
        const { rows } = await stores[0]!.pool.query(
          "SELECT count(*)::int AS n FROM tenxgraph_runs_schema",
        );
        expect(rows[0].n).toBe(1);
        await stores[0]!.pool.query("SELECT 1 FROM graphile_worker.jobs LIMIT 1");
      } finally {
        await Promise.all([
          ...stores.map((s) => s.close()),
          ...checkpointers.map((c) => c.close()),
        ]);
      }
    },
    60_000,
  );
});
