/**
 * The schema, as numbered steps: a migration's position in {@link MIGRATIONS} is its version.
 * Published steps never change; a new schema is a new step appended at the end.
 *
 * SQLite mirrors the PostgreSQL data model: `threads` holds one row per thread with its
 * current version, `states` one small row per version (no transcript), `messages` the append-only
 * transcript, `tool_executions` the ledger. Every child table cascades from `threads`.
 */
export const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE threads (
      thread_id TEXT PRIMARY KEY,
      user_id TEXT,
      status TEXT NOT NULL,
      version INTEGER NOT NULL CHECK (version > 0),
      message_count INTEGER NOT NULL DEFAULT 0,
      -- Counted, never cleared: a run stops when the count grows past what it saw at its start.
      -- (Moved to its own table by step 2.)
      stop_requests INTEGER NOT NULL DEFAULT 0,
      -- Store-wide write order, so listings are exact even within one clock tick.
      write_seq INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX threads_by_write ON threads (write_seq)`,
    `CREATE INDEX threads_by_user ON threads (user_id, write_seq)`,
    `CREATE TABLE states (
      thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      version INTEGER NOT NULL,
      step INTEGER NOT NULL,
      current_node TEXT,
      status TEXT NOT NULL,
      values_json TEXT NOT NULL,
      interrupts_json TEXT NOT NULL,
      resume_answers_json TEXT NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (thread_id, version)
    ) WITHOUT ROWID`,
    `CREATE TABLE messages (
      thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      message_id TEXT NOT NULL,
      -- The message's index in the transcript: 0, 1, 2, … per thread.
      seq INTEGER NOT NULL,
      body_json TEXT NOT NULL,
      PRIMARY KEY (thread_id, message_id),
      UNIQUE (thread_id, seq)
    ) WITHOUT ROWID`,
    // A rowid table on purpose: a takeover updates the row in place, so ordering by rowid lists
    // the ledger oldest first claim first, as listCalls promises.
    `CREATE TABLE tool_executions (
      thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      call_key TEXT NOT NULL,
      tool_name TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('started', 'interrupted', 'completed')),
      attempt INTEGER NOT NULL CHECK (attempt > 0),
      owner_run_id TEXT NOT NULL,
      started_at TEXT NOT NULL,
      heartbeat_at TEXT,
      result_json TEXT,
      completed_at TEXT,
      PRIMARY KEY (thread_id, call_key)
    )`,
  ],
  // Step 2: a stop may be requested before the thread's first write (a run counts the requests
  // before its start write creates the row), so the count gets a table of its own that needs no
  // thread row. It is the one table without a foreign key; deleteThread deletes its row.
  [
    `CREATE TABLE stop_requests (
      thread_id TEXT PRIMARY KEY,
      count INTEGER NOT NULL CHECK (count > 0)
    ) WITHOUT ROWID`,
    `INSERT INTO stop_requests (thread_id, count)
      SELECT thread_id, stop_requests FROM threads WHERE stop_requests > 0`,
    `ALTER TABLE threads DROP COLUMN stop_requests`,
  ],
  // Step 3: a claim carries its claimant's lease, an expiry every reader honours, renewed by each
  // heartbeat with the claimant's own lease length (readers used to judge a claim by their own
  // setting, so a worker with a slower heartbeat lost its live claim). A claim made before
  // keeps the lease it had then: its heartbeat plus the old default of 3000 ms.
  [
    `ALTER TABLE tool_executions ADD COLUMN lease_expires_at TEXT`,
    `UPDATE tool_executions
      SET lease_expires_at =
        strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(heartbeat_at, started_at), '+3.000 seconds')
      WHERE status = 'started'`,
  ],
  // Step 4: a thread's incarnation, its life's id, minted by the write that creates it. Every
  // write compares it with the version, so a run still going on a deleted thread cannot write
  // into a new thread of the same id that reached the same version. A thread made before
  // keeps the empty one, which its own runs read and write back.
  [`ALTER TABLE threads ADD COLUMN incarnation TEXT NOT NULL DEFAULT ''`],
];

/** The schema version this code writes and reads. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS.length;

/** The table that records applied migrations; its presence marks a tenxgraph database. */
export const SCHEMA_TABLE = "tenxgraph_schema";

/** Tables of ours: found in a file without {@link SCHEMA_TABLE}, they belong to someone else. */
export const OWN_TABLES = [
  "threads",
  "states",
  "messages",
  "tool_executions",
  "stop_requests",
] as const;
