import { CHECKPOINT_RECORD_MIGRATION } from "./checkpoint-record-migration.js";
import { CHILD_THREADS_MIGRATION } from "./child-threads-migration.js";
import { HISTORY_MIGRATION } from "./history-migration.js";

/** One numbered step of the schema: its tables, never its functions (see functions/). */
export interface Migration {
  /**
   * What the step does. SQLite's steps (packages/sqlite/src/migrations.ts) are named the same
   * where the two engines take the same step.
   */
  readonly name: string;
  /** Run in order, in the setup transaction. */
  readonly up: readonly string[];
}

/**
 * The schema, as numbered steps: a migration's position in {@link MIGRATIONS} is its version.
 * Published steps never change their tables; a new schema is a new step appended at the end.
 * Every step runs in the setup transaction, under the advisory lock, so two processes never
 * migrate at once.
 *
 * The data model: `threads` holds one row per thread with its current version, `states`
 * one small row per version (never the transcript: since migration 7, the ranges of message
 * rows it holds; since migration 10, the runtime's fields as one `record`), `messages` the
 * append-only table of message rows, `tool_executions` the ledger, which cascades from
 * `threads`; deleting a thread deletes its states and messages itself (since migration 13,
 * which dropped their foreign keys). Payloads are `jsonb`.
 *
 * The writes that must be one round trip and one transaction (a step, and a node's claims) are
 * PL/pgSQL functions, so a step costs one commit and one network round trip. Functions are code,
 * not steps: each has one current text in functions/, which setup installs after the steps
 * (install-functions.ts). Steps that once created or replaced a function (1, 2, 4, 6, 7, 9)
 * keep only their table changes; migration 9 changed nothing else, so it is empty.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: "initial",
    up: [
      `CREATE TABLE tenxgraph_schema (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`,
      // Store-wide write order, so listings are exact even within one clock tick.
      `CREATE SEQUENCE threads_write_seq`,
      `CREATE TABLE threads (
      thread_id text PRIMARY KEY,
      user_id text,
      name text,
      status text NOT NULL,
      version bigint NOT NULL CHECK (version > 0),
      message_count integer NOT NULL DEFAULT 0,
      write_seq bigint NOT NULL DEFAULT nextval('threads_write_seq'),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
      `CREATE INDEX threads_by_write ON threads (write_seq DESC)`,
      `CREATE INDEX threads_by_user ON threads (user_id, write_seq DESC)`,
      `CREATE TABLE states (
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      version bigint NOT NULL,
      step integer NOT NULL,
      current_node text,
      status text NOT NULL,
      "values" jsonb NOT NULL,
      interrupts jsonb NOT NULL,
      resume_answers jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (thread_id, version)
    )`,
      `CREATE TABLE messages (
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      message_id text NOT NULL,
      -- The message's index in the transcript: 0, 1, 2, … per thread.
      seq integer NOT NULL,
      body jsonb NOT NULL,
      PRIMARY KEY (thread_id, message_id),
      UNIQUE (thread_id, seq)
    )`,
      `CREATE TABLE tool_executions (
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      call_key text NOT NULL,
      -- Claim order, for listings: the claiming batch, then the call's place in it. A takeover
      -- updates the row in place, so the order stays the first claim's.
      claim_batch bigint NOT NULL,
      claim_index integer NOT NULL,
      tool_name text NOT NULL,
      status text NOT NULL CHECK (status IN ('started', 'interrupted', 'completed')),
      attempt integer NOT NULL CHECK (attempt > 0),
      owner_run_id text NOT NULL,
      started_at timestamptz NOT NULL,
      heartbeat_at timestamptz,
      result jsonb,
      completed_at timestamptz,
      PRIMARY KEY (thread_id, call_key)
    )`,
      // A stop may be requested before the thread's first write (a run counts the requests before
      // its start write creates the row), so this is the one table without a foreign key;
      // deleteThread deletes its row in the same statement.
      `CREATE SEQUENCE tool_claim_batches`,
      `CREATE TABLE stop_requests (
      thread_id text PRIMARY KEY,
      count bigint NOT NULL CHECK (count > 0)
    )`,
    ],
  },
  {
    // A thread's incarnation: a deleted thread's id may be reused, but never its incarnation,
    // so a copy of the old thread left in Redis can never pass for the new one. A sequence
    // value, so a newer incarnation is a larger number and the cache can refuse a late write
    // about an older one. ADD COLUMN fills the existing rows, each with a value of its own.
    name: "thread-incarnation",
    up: [
      `CREATE SEQUENCE threads_incarnation`,
      `ALTER TABLE threads
        ADD COLUMN incarnation bigint NOT NULL DEFAULT nextval('threads_incarnation')`,
    ],
  },
  {
    // The store's id, made once: it names the store's keys in Redis. A DSN cannot: two servers
    // may each have a database of the same name, and share one Redis. One row at most.
    name: "store-id",
    up: [
      `CREATE TABLE tenxgraph_store (
        one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
        store_id text NOT NULL
      )`,
      `INSERT INTO tenxgraph_store (store_id) VALUES (gen_random_uuid()::text)`,
    ],
  },
  {
    // A claim carries its claimant's lease, an expiry on the server's clock that every reader
    // honours, renewed by each heartbeat with the claimant's own lease length. A claim made
    // before keeps the lease it had then: its last heartbeat plus the old default of 3000 ms.
    name: "claim-leases",
    up: [
      `ALTER TABLE tool_executions ADD COLUMN lease_expires_at timestamptz`,
      `UPDATE tool_executions
       SET lease_expires_at = coalesce(heartbeat_at, started_at) + interval '3000 milliseconds'
       WHERE status = 'started'`,
    ],
  },
  {
    // Every write names the life of the thread it was computed from (the `incarnation` of
    // core's checkpoint), compared with the version. The column is `incarnation_id`, beside
    // migration 2's `incarnation` (the server's sequence number, which orders lives for the
    // Redis cache). A thread made before keeps the empty id, which its own runs read and write.
    name: "incarnation-id",
    up: [`ALTER TABLE threads ADD COLUMN incarnation_id text NOT NULL DEFAULT ''`],
  },
  {
    // Ledger protocol v2 (a step's write carries its ledger writes) and HOT step updates. Fill
    // factor 80 keeps a fifth of each page free for the new versions of its rows: HOT needs the
    // new version on the old one's page. It applies to pages filled from now on.
    name: "step-ledger",
    up: [`ALTER TABLE threads SET (fillfactor = 80)`],
  },
  { name: "history", up: HISTORY_MIGRATION },
  { name: "child-threads", up: CHILD_THREADS_MIGRATION },
  // A write never changes a thread's owner: the step function refuses a write naming another
  // user (`OWNER_REFUSED`). A change of the function alone, so nothing is left here.
  { name: "owner-check", up: [] },
  { name: "checkpoint-record", up: CHECKPOINT_RECORD_MIGRATION },
  {
    // The digest of the text each function was installed from (install-functions.ts), so setup
    // makes a function again only when its text changed.
    name: "function-digests",
    up: [
      `CREATE TABLE tenxgraph_functions (
        name text PRIMARY KEY,
        digest text NOT NULL,
        installed_at timestamptz NOT NULL DEFAULT now()
      )`,
    ],
  },
  {
    // The long-term store (`PgStore`): one row per item, its namespace's labels joined by '.'
    // (labels cannot hold one), its value and the vectors of its texts as jsonb. `write_seq`
    // orders items by their last write, exactly, whichever process wrote them.
    name: "store",
    up: [
      `CREATE SEQUENCE store_write_seq`,
      `CREATE TABLE store_items (
        namespace text NOT NULL,
        key text NOT NULL,
        value jsonb NOT NULL,
        vectors jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        write_seq bigint NOT NULL DEFAULT nextval('store_write_seq'),
        PRIMARY KEY (namespace, key)
      )`,
      `CREATE INDEX store_items_by_write ON store_items (write_seq)`,
    ],
  },
  {
    // A step's state and message rows are written only by the step function, in the statement
    // that locks and updates (or creates) their thread row, and by copyThread, in the
    // transaction that creates it: their foreign keys re-checked what that statement had just
    // made sure of, two trigger queries or more per step. Deleting a thread deletes them itself
    // (`removeThread` in pg-checkpointer.ts, under the thread rows' locks, so a step in flight
    // cannot leave one behind). The ledger keeps its key: claims are written outside steps too.
    name: "step-rows-unkeyed",
    up: [
      `ALTER TABLE states DROP CONSTRAINT states_thread_id_fkey`,
      `ALTER TABLE messages DROP CONSTRAINT messages_thread_id_fkey`,
    ],
  },
];

/** The schema version this code writes and reads. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS.length;

/** Tables of ours: found in a schema without `tenxgraph_schema`, they belong to someone else. */
export const OWN_TABLES = [
  "threads",
  "states",
  "messages",
  "tool_executions",
  "stop_requests",
  "store_items",
] as const;
