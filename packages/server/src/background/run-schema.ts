import {
  applyMigrationSteps,
  hostDatabaseError,
  withMigrationLock,
  type MigrationStep,
} from "@tenxgraph/postgres";
import { Logger as QueueLogger, runMigrations } from "graphile-worker";
import { QUEUE_HOLD_PREFIX, threadQueueName, type RunDb } from "./run-db.js";
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
  // A run posted to a thread with no active run gets a job outside the thread's queue (see
  // QUEUE_PREFIX in run-db.ts). The triggers hold the queue for it while it is active, so that
  // the runs queued behind it wait, whichever version queued them and whatever ends it. Their
  // functions' names do not start with `tenxgraph_`: a checkpointer sharing the schema drops
  // every such function it does not know (`installFunctions` of @tenxgraph/postgres).
  {
    name: "a thread's first run outside its thread's queue",
    statements: [
      // Runs created before this step were all queued in their thread's queue.
      `ALTER TABLE tenxgraph_runs ADD COLUMN queued boolean NOT NULL DEFAULT true`,
      `CREATE FUNCTION hold_tenxgraph_thread_queue() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE front text;
       BEGIN
         -- FOR SHARE: an end of the front run being written is waited for, then seen.
         SELECT run_id INTO front FROM tenxgraph_runs
          WHERE thread_id = NEW.thread_id AND run_id <> NEW.run_id AND NOT queued
            AND status IN ('pending', 'running')
          LIMIT 1 FOR SHARE;
         IF front IS NOT NULL THEN
           -- Taken over even from a worker still completing an ended run's job there: a
           -- worker's completion unlocks a queue only while its own id holds it.
           INSERT INTO graphile_worker._private_job_queues AS q (queue_name, locked_by, locked_at)
           VALUES (${threadQueueName("NEW.thread_id")}, '${QUEUE_HOLD_PREFIX}' || front, now())
           ON CONFLICT (queue_name) DO UPDATE
             SET locked_by = EXCLUDED.locked_by, locked_at = EXCLUDED.locked_at;
         END IF;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER tenxgraph_runs_hold_thread_queue AFTER INSERT ON tenxgraph_runs
         FOR EACH ROW WHEN (NEW.queued) EXECUTE FUNCTION hold_tenxgraph_thread_queue()`,
      `CREATE FUNCTION release_tenxgraph_thread_queue() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE graphile_worker._private_job_queues SET locked_by = NULL, locked_at = NULL
          WHERE queue_name = ${threadQueueName("OLD.thread_id")}
            AND locked_by = '${QUEUE_HOLD_PREFIX}' || OLD.run_id;
         -- Wakes idle workers: the queue's next job is theirs to take.
         IF FOUND THEN PERFORM pg_notify('jobs:insert', '{"count":1}'); END IF;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER tenxgraph_runs_release_thread_queue AFTER UPDATE OF status ON tenxgraph_runs
         FOR EACH ROW WHEN (NOT OLD.queued AND OLD.status IN ('pending', 'running')
                            AND NEW.status NOT IN ('pending', 'running'))
         EXECUTE FUNCTION release_tenxgraph_thread_queue()`,
      `CREATE TRIGGER tenxgraph_runs_release_thread_queue_on_delete AFTER DELETE ON tenxgraph_runs
         FOR EACH ROW WHEN (NOT OLD.queued AND OLD.status IN ('pending', 'running'))
         EXECUTE FUNCTION release_tenxgraph_thread_queue()`,
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
