/**
 * One numbered step of the schema. Its version is its place in {@link MIGRATIONS}, and its
 * name says what it does; PostgreSQL's steps (packages/postgres/src/schema/migrations.ts) are
 * named the same where the two engines take the same step.
 */
export interface Migration {
  readonly name: string;
  /** Run in order, in the one transaction that applies the pending steps. */
  readonly up: readonly string[];
  /**
   * The step rebuilds a table that other tables reference by foreign key (SQLite's 12-step
   * ALTER TABLE, https://sqlite.org/lang_altertable.html#otheralter): with enforcement on,
   * dropping the old table would delete every child row through `ON DELETE CASCADE`, and the
   * pragma cannot change inside a transaction. So the migration turns enforcement off before
   * `BEGIN`, runs `PRAGMA foreign_key_check` before `COMMIT` (any row it reports fails the
   * migration, which then writes nothing), and turns enforcement on again after.
   */
  readonly foreignKeysOff?: true;
}

/**
 * The schema, as numbered steps: a migration's position in {@link MIGRATIONS} is its version.
 * Published steps never change; a new schema is a new step appended at the end.
 *
 * SQLite mirrors the PostgreSQL data model: `threads` holds one row per thread with its
 * current version, `states` one small row per version (naming the message rows of its
 * transcript), `messages` the append-only table of message rows, `tool_executions` the ledger.
 * Every child table cascades from `threads`.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: "initial",
    up: [
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
      // the ledger oldest first claim first, as listCalls promises. (Step 5 makes the order a
      // column.)
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
  },
  // Step 2: a stop may be requested before the thread's first write (a run counts the requests
  // before its start write creates the row), so the count gets a table of its own that needs no
  // thread row. It is the one table without a foreign key; deleteThread deletes its row.
  {
    name: "stop-requests",
    up: [
      `CREATE TABLE stop_requests (
      thread_id TEXT PRIMARY KEY,
      count INTEGER NOT NULL CHECK (count > 0)
    ) WITHOUT ROWID`,
      `INSERT INTO stop_requests (thread_id, count)
      SELECT thread_id, stop_requests FROM threads WHERE stop_requests > 0`,
      `ALTER TABLE threads DROP COLUMN stop_requests`,
    ],
  },
  // Step 3: a claim carries its claimant's lease, an expiry every reader honours, renewed by each
  // heartbeat with the claimant's own lease length (readers used to judge a claim by their own
  // setting, so a worker with a slower heartbeat lost its live claim). A claim made before
  // keeps the lease it had then: its heartbeat plus the old default of 3000 ms.
  {
    name: "claim-leases",
    up: [
      `ALTER TABLE tool_executions ADD COLUMN lease_expires_at TEXT`,
      `UPDATE tool_executions
      SET lease_expires_at =
        strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(heartbeat_at, started_at), '+3.000 seconds')
      WHERE status = 'started'`,
    ],
  },
  // Step 4: a thread's incarnation, its life's id, minted by the write that creates it. Every
  // write compares it with the version, so a run still going on a deleted thread cannot write
  // into a new thread of the same id that reached the same version. A thread made before
  // keeps the empty one, which its own runs read and write back.
  {
    name: "incarnation-id",
    up: [`ALTER TABLE threads ADD COLUMN incarnation TEXT NOT NULL DEFAULT ''`],
  },
  // Step 5: `threads` and `tool_executions` become WITHOUT ROWID tables keyed by thread, as
  // `states` and `messages` are: a thread's row and its ledger entries sit in the key's own
  // b-tree, found with one search instead of a search of the key's index and then of the rowid.
  // Each table is rebuilt by SQLite's 12-step procedure (create the new table, copy every row,
  // drop the old one, rename, recreate its indexes), with foreign keys off since the child
  // tables reference `threads`. The ledger kept its claim order in the rowid (a takeover
  // updates the entry in place); it becomes the column `claim_seq`, copied from the old rowid,
  // and each new claim takes its thread's largest plus one. `write_seq` keeps its values (only a
  // write that creates the thread or changes its status moves it: see sql.ts).
  {
    foreignKeysOff: true,
    name: "without-rowid",
    up: [
      `CREATE TABLE new_threads (
        thread_id TEXT NOT NULL PRIMARY KEY,
        incarnation TEXT NOT NULL DEFAULT '',
        user_id TEXT,
        status TEXT NOT NULL,
        version INTEGER NOT NULL CHECK (version > 0),
        message_count INTEGER NOT NULL DEFAULT 0,
        -- Store-wide order of the writes that created the thread or changed its status, so
        -- listings are exact even within one clock tick.
        write_seq INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) WITHOUT ROWID`,
      `INSERT INTO new_threads (thread_id, incarnation, user_id, status, version, message_count,
                               write_seq, created_at, updated_at)
        SELECT thread_id, incarnation, user_id, status, version, message_count, write_seq,
               created_at, updated_at
        FROM threads`,
      `DROP TABLE threads`,
      `ALTER TABLE new_threads RENAME TO threads`,
      `CREATE INDEX threads_by_write ON threads (write_seq)`,
      `CREATE INDEX threads_by_user ON threads (user_id, write_seq)`,
      `CREATE TABLE new_tool_executions (
        thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
        call_key TEXT NOT NULL,
        -- The entry's place in its thread's ledger, set by its first claim and never changed:
        -- listCalls lists oldest claim first.
        claim_seq INTEGER NOT NULL,
        tool_name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('started', 'interrupted', 'completed')),
        attempt INTEGER NOT NULL CHECK (attempt > 0),
        owner_run_id TEXT NOT NULL,
        started_at TEXT NOT NULL,
        heartbeat_at TEXT,
        lease_expires_at TEXT,
        result_json TEXT,
        completed_at TEXT,
        PRIMARY KEY (thread_id, call_key)
      ) WITHOUT ROWID`,
      `INSERT INTO new_tool_executions (thread_id, call_key, claim_seq, tool_name, status, attempt,
                                       owner_run_id, started_at, heartbeat_at, lease_expires_at,
                                       result_json, completed_at)
        SELECT thread_id, call_key, rowid, tool_name, status, attempt, owner_run_id, started_at,
               heartbeat_at, lease_expires_at, result_json, completed_at
        FROM tool_executions`,
      `DROP TABLE tool_executions`,
      `ALTER TABLE new_tool_executions RENAME TO tool_executions`,
      // Finds a thread's largest claim_seq for a new claim, and lists its ledger in order,
      // without reading the entries. A claim adds one entry; nothing later changes it.
      `CREATE UNIQUE INDEX tool_executions_by_claim ON tool_executions (thread_id, claim_seq)`,
    ],
  },
  // Step 6: history. A version names the message rows its transcript holds (a fork, an edit or
  // a removal makes a transcript that is not a prefix of the table), so `messages` is keyed by
  // its place, `(thread_id, seq)`, and a message id may appear in several rows: an edit writes
  // a new row with the same id, and a fork may send again a message of the abandoned branch.
  // The id keeps a plain index, used to check a write's ids against its parent's transcript.
  // The table is rebuilt by the 12-step procedure, as in step 5. `threads` gets `next_seq`,
  // the next row's place (no longer always `message_count`, the head's transcript length), and
  // `delete_after`, indexed for the sweep. `states` gets the parent, node and run of each
  // version, its frontier (`frontier_json`, NULL for the plain chain), and its transcript: `message_count` rows, named by `message_ranges`
  // (`[[start, end], ...]` in order; NULL is the prefix `[0, message_count)`, the common case,
  // which keeps an appending write from writing JSON). History starts at the upgrade: only
  // the head version of each thread gets its transcript (the whole table, as every transcript
  // was a prefix then); older versions keep `message_count` NULL, because nothing recorded
  // how long their transcripts were, and the readers skip them.
  {
    foreignKeysOff: true,
    name: "history",
    up: [
      `CREATE TABLE new_messages (
        thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
        -- The row's place in its thread's append-only table: 0, 1, 2, … never reused.
        seq INTEGER NOT NULL,
        message_id TEXT NOT NULL,
        body_json TEXT NOT NULL,
        PRIMARY KEY (thread_id, seq)
      ) WITHOUT ROWID`,
      `INSERT INTO new_messages (thread_id, seq, message_id, body_json)
        SELECT thread_id, seq, message_id, body_json FROM messages`,
      `DROP TABLE messages`,
      `ALTER TABLE new_messages RENAME TO messages`,
      `CREATE INDEX messages_by_id ON messages (thread_id, message_id)`,
      `ALTER TABLE threads ADD COLUMN next_seq INTEGER NOT NULL DEFAULT 0`,
      `UPDATE threads SET next_seq = message_count`,
      // ISO-8601 time after which deleteExpiredThreads deletes the thread; NULL: never.
      `ALTER TABLE threads ADD COLUMN delete_after TEXT`,
      `CREATE INDEX threads_by_delete_after ON threads (delete_after)
        WHERE delete_after IS NOT NULL`,
      `ALTER TABLE states ADD COLUMN parent_version INTEGER`,
      `ALTER TABLE states ADD COLUMN node TEXT`,
      `ALTER TABLE states ADD COLUMN run_id TEXT`,
      `ALTER TABLE states ADD COLUMN message_count INTEGER`,
      `ALTER TABLE states ADD COLUMN message_ranges TEXT`,
      // The version's frontier (JSON); NULL for the plain chain, as every version was before.
      `ALTER TABLE states ADD COLUMN frontier_json TEXT`,
      `UPDATE states
        SET message_count = (SELECT t.message_count FROM threads t
                             WHERE t.thread_id = states.thread_id),
            parent_version = NULLIF(version - 1, 0)
        WHERE version = (SELECT t.version FROM threads t WHERE t.thread_id = states.thread_id)`,
    ],
  },
  // Step 7: child threads. A subgraph's thread records the thread it was run for,
  // `parent_thread_id`, set by its first write: listings show only threads without one unless
  // asked for a parent's children, and deleting a thread deletes its descendants. The index
  // serves both (children in listing order, and top-level threads as those with NULL).
  // Threads written before the upgrade recorded no parent, so each gets one by the id a
  // subgraph gives its child (`<parent>|<node>@<step>`): the longest existing thread whose id
  // followed by '|' starts the thread's id. The candidates are the thread's own prefixes that
  // end before a '|', each found by its key; LIKE would misread ids holding '%' or '_'.
  {
    name: "child-threads",
    up: [
      `ALTER TABLE threads ADD COLUMN parent_thread_id TEXT`,
      `CREATE INDEX threads_by_parent ON threads (parent_thread_id, write_seq)`,
      `WITH RECURSIVE cut(child, len) AS (
        SELECT thread_id, length(thread_id) - 1 FROM threads WHERE instr(thread_id, '|') > 0
        UNION ALL
        SELECT child, len - 1 FROM cut WHERE len > 1
      ),
      parents AS (
        SELECT cut.child, max(cut.len) AS len
        FROM cut JOIN threads p ON p.thread_id = substr(cut.child, 1, cut.len)
        WHERE substr(cut.child, 1, length(p.thread_id) + 1) = p.thread_id || '|'
        GROUP BY cut.child
      )
      UPDATE threads SET parent_thread_id = substr(thread_id, 1, parents.len)
      FROM parents WHERE parents.child = threads.thread_id`,
    ],
  },
  // Step 8: one checkpoint record. The fields only the runtime reads (step, current node,
  // frontier, values, interrupts, resume answers) become one JSON value, `record_json`, that
  // the store keeps whole (`encodeCheckpointRecord` of @tenxgraph/core/storage makes it,
  // `decodeCheckpointRecord` reads it, tolerating fields a record lacks), so a new runtime
  // field needs no new column. Every kept version gets its record from its old columns, which
  // then go.
  {
    name: "checkpoint-record",
    up: [
      `ALTER TABLE states ADD COLUMN record_json TEXT NOT NULL DEFAULT '{}'`,
      `UPDATE states SET record_json = json_object(
        'step', step, 'currentNode', current_node, 'frontier', json(frontier_json),
        'values', json(values_json), 'interrupts', json(interrupts_json),
        'resumeAnswers', json(resume_answers_json))`,
      `ALTER TABLE states DROP COLUMN step`,
      `ALTER TABLE states DROP COLUMN current_node`,
      `ALTER TABLE states DROP COLUMN frontier_json`,
      `ALTER TABLE states DROP COLUMN values_json`,
      `ALTER TABLE states DROP COLUMN interrupts_json`,
      `ALTER TABLE states DROP COLUMN resume_answers_json`,
    ],
  },
  // Step 9: the long-term store (`SqliteStore`): one row per item, its namespace's labels
  // joined by '.' (labels cannot hold one), its value and the vectors of its texts as JSON.
  // `write_seq` orders items by their last write, exactly, within one clock tick too.
  {
    name: "store",
    up: [
      `CREATE TABLE store_items (
      namespace TEXT NOT NULL,
      key TEXT NOT NULL,
      value_json TEXT NOT NULL,
      vectors_json TEXT NOT NULL DEFAULT '[]',
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      write_seq INTEGER NOT NULL,
      PRIMARY KEY (namespace, key)
    ) WITHOUT ROWID`,
      `CREATE INDEX store_items_by_write ON store_items (write_seq)`,
    ],
  },
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
  "store_items",
] as const;
