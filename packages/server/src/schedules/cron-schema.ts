import type { MigrationStep } from "@tenxgraph/postgres";

/** The advisory lock every setup of the schedules' tables takes, in any process. */
export const CRON_SCHEMA_LOCK = 7_315_062_002;
/** The migrations' version table of the schedules' tables. */
export const CRON_SCHEMA_TABLE = "tenxgraph_crons_schema";

/**
 * The schedules and their ticks: a step's position in this list is its version. A tick's
 * primary key `(cron_id, tick_at)` is what lets any number of schedulers run: the one whose
 * insert wins starts the tick, the others find it taken.
 */
export const CRON_MIGRATIONS: readonly MigrationStep[] = [
  {
    name: "crons and their ticks",
    statements: [
      `CREATE TABLE tenxgraph_crons (
     cron_id text PRIMARY KEY,
     user_id text,
     schedule text NOT NULL,
     timezone text NOT NULL,
     thread_id text,
     payload jsonb NOT NULL,
     next_tick_at timestamptz NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX tenxgraph_crons_due ON tenxgraph_crons (next_tick_at);
   CREATE INDEX tenxgraph_crons_by_user ON tenxgraph_crons (user_id, created_at DESC);
   CREATE TABLE tenxgraph_cron_ticks (
     cron_id text NOT NULL REFERENCES tenxgraph_crons ON DELETE CASCADE,
     tick_at timestamptz NOT NULL,
     run_id text NOT NULL,
     thread_id text NOT NULL,
     queued_at timestamptz,
     error jsonb,
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (cron_id, tick_at)
   );
   CREATE INDEX tenxgraph_cron_ticks_unqueued ON tenxgraph_cron_ticks (created_at)
     WHERE queued_at IS NULL AND error IS NULL;`,
    ],
  },
  {
    // The API a schedule was made through: its ticks queue a run of that API's shape.
    name: "crons' wire shape",
    statements: [
      `ALTER TABLE tenxgraph_crons ADD COLUMN wire text NOT NULL DEFAULT 'v1'
         CHECK (wire IN ('v1', 'langgraph'))`,
    ],
  },
];
