import type { MigrationStep } from "@tenxgraph/postgres";

/** The migrations' version table of the webhooks' outbox (beside the runs' own). */
export const WEBHOOK_SCHEMA_TABLE = "tenxgraph_webhooks_schema";

/**
 * The part of the statement that writes a run's events (`background/run-db.ts`, `updateRun`)
 * that owes a webhook delivery for each event a webhook announces (a run's final `run_status`,
 * a `tool_in_doubt`) of a run with a `webhook`: in the same statement, so an event written is
 * a delivery owed, and a fenced-out write (no row) owes none. Reads the CTE `run` (the run's
 * row, after its update) and `$2` (the events, numbered on from the run's last). The event id
 * is `<run_id>:<seq>`, the event's own key: stable across retries and restarts.
 */
export const OWE_DELIVERIES = `owed AS (
       INSERT INTO tenxgraph_webhook_deliveries (event_id, run_id, url, body)
       SELECT run.run_id || ':' || seq, run.run_id, run.request->>'webhook',
              jsonb_build_object(
                'id', run.run_id || ':' || seq,
                'type', CASE WHEN e.event->>'type' = 'run_status'
                             THEN 'run.' || (e.event->>'status') ELSE 'run.tool_in_doubt' END,
                'created_at', now(),
                'data', jsonb_build_object('run_id', run.run_id, 'thread_id', run.thread_id,
                                           'event', e.event))
         FROM run, jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(event, ord),
              LATERAL (SELECT run.last_event_seq - jsonb_array_length($2::jsonb) + e.ord AS seq) n
        WHERE run.request ? 'webhook' AND e.event->>'type' IN ('run_status', 'tool_in_doubt')
       ON CONFLICT (event_id) DO NOTHING)`;

/** The outbox's tables: a step's position in this list is its version. */
export const WEBHOOK_MIGRATIONS: readonly MigrationStep[] = [
  {
    name: "webhook outbox",
    statements: [
      `CREATE TABLE tenxgraph_webhook_deliveries (
     event_id text PRIMARY KEY,
     run_id text NOT NULL,
     url text NOT NULL,
     body jsonb NOT NULL,
     state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
     attempts integer NOT NULL DEFAULT 0,
     last_status integer,
     last_error text,
     next_attempt_at timestamptz NOT NULL DEFAULT now(),
     delivered_at timestamptz,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX tenxgraph_webhook_deliveries_due
     ON tenxgraph_webhook_deliveries (next_attempt_at) WHERE state = 'pending';
   CREATE INDEX tenxgraph_webhook_deliveries_by_run ON tenxgraph_webhook_deliveries (run_id);`,
    ],
  },
];
