import {
  applyMigrationSteps,
  hostDatabaseError,
  withMigrationLock,
  type MigrationStep,
} from "@tenxgraph/postgres";
import { Logger as QueueLogger, runMigrations } from "graphile-worker";
import type { RunDb } from "./run-db.js";
import { WEBHOOK_MIGRATIONS, WEBHOOK_SCHEMA_TABLE } from "../webhooks/webhook-schema.js";

/** The advisory lock every setup of the runs' database takes, in any process. */
const SCHEMA_LOCK = 7_315_062_001;
/** The runs' tables: a step's position in this list is its version (`tenxgraph_runs_schema`). */
const MIGRATIONS: readonly MigrationStep[] = [
  {
    name: "runs and their events",
    statements: [
      `CREATE TABLE tenxgraph_runs (
     run_id text PRIMARY KEY,
     thread_id text NOT NULL,
     user_id text,
     status text NOT NULL CHECK (status IN
       ('pending', 'running', 'interrupted', 'completed', 'failed', 'cancelled')),
     multitask_strategy text NOT NULL,
     request jsonb NOT NULL,
     worker_id text,
     queue_worker_id text,
     attempts integer NOT NULL DEFAULT 0,
     base_version bigint,
     heartbeat_at timestamptz,
     stop_requested text,
     error jsonb,
     last_event_seq bigint NOT NULL DEFAULT 0,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX tenxgraph_runs_by_thread ON tenxgraph_runs (thread_id, created_at DESC);
   CREATE INDEX tenxgraph_runs_held ON tenxgraph_runs (heartbeat_at) WHERE status = 'running';
   CREATE TABLE tenxgraph_run_events (
     run_id text NOT NULL REFERENCES tenxgraph_runs ON DELETE CASCADE,
     seq bigint NOT NULL,
     attempt integer NOT NULL,
     event jsonb NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (run_id, seq)
   );`,
    ],
  },
];

/**
 * graphile-worker's migrations, then ours, all under one session-level advisory lock: N
 * replicas starting at once on an empty database would otherwise race PostgreSQL's `CREATE
 * SCHEMA IF NOT EXISTS` (graphile-worker's first statement), which is not safe concurrently
 * and fails the loser on `pg_namespace_nspname_index`. The lock's holder migrates; the others
 * wait, then find nothing to do. A holder that dies frees the lock with its session.
 */
export async function migrateRunSchema(db: RunDb): Promise<void> {
  try {
    await withMigrationLock(db.pool, SCHEMA_LOCK, async (client) => {
      await runMigrations({ pgPool: db.pool, logger: silentLogger });
      await applyMigrationSteps(client, "tenxgraph_runs_schema", MIGRATIONS);
      // The outbox's trigger is on the runs' events: created with them, never without.
      await applyMigrationSteps(client, WEBHOOK_SCHEMA_TABLE, WEBHOOK_MIGRATIONS);
    });
  } catch (error) {
    throw hostDatabaseError("setup", db.pool, error);
  }
}

/** graphile-worker's migrations log every step; the store says what matters itself. */
const silentLogger = new QueueLogger(() => () => {});
