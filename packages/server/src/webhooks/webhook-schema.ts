import type { MigrationStep } from "@tenxgraph/postgres";

/** The migrations' version table of the webhooks' outbox (beside the runs' own). */
export const WEBHOOK_SCHEMA_TABLE = "tenxgraph_webhooks_schema";

/**
 * The outbox row of a run event that a webhook announces, written by a trigger on the run's
 * events: in the same transaction as the event itself (a run's final `run_status`, or a
 * `tool_in_doubt`), so an event written is a delivery owed, and a rolled-back one is none.
 * The event id is `<run_id>:<seq>`, the event's own key: stable across retries and restarts.
 */
const OUTBOX_FUNCTION = `CREATE OR REPLACE FUNCTION tenxgraph_webhook_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tenxgraph_webhook_deliveries (event_id, run_id, url, body)
  SELECT NEW.run_id || ':' || NEW.seq, r.run_id, r.request->>'webhook',
         jsonb_build_object(
           'id', NEW.run_id || ':' || NEW.seq,
           'type', CASE WHEN NEW.event->>'type' = 'run_status'
                        THEN 'run.' || (NEW.event->>'status') ELSE 'run.tool_in_doubt' END,
           'created_at', NEW.created_at,
           'data', jsonb_build_object('run_id', r.run_id, 'thread_id', r.thread_id,
                                      'event', NEW.event))
    FROM tenxgraph_runs r
   WHERE r.run_id = NEW.run_id AND r.request ? 'webhook'
  ON CONFLICT (event_id) DO NOTHING;
  RETURN NULL;
END $$`;

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
      OUTBOX_FUNCTION,
      `CREATE TRIGGER tenxgraph_webhook_outbox AFTER INSERT ON tenxgraph_run_events
     FOR EACH ROW WHEN (NEW.event->>'type' IN ('run_status', 'tool_in_doubt'))
     EXECUTE FUNCTION tenxgraph_webhook_outbox()`,
    ],
  },
];
