import type { MemoryRow } from "../measure/measure-memory.js";
import type { PostgresResults } from "../measure/measure-postgres.js";
import { renderPostgres } from "./render-postgres.js";
import type { SqlitePlan } from "../measure/measure-sqlite.js";
import type { SqliteRow } from "../measure/sqlite-workload-bench.js";

/** Everything one bench run found, as written to results.json. */
export interface BenchResults {
  machine: string;
  /** The 1-minute load average when the bench started and ended. */
  load: { atStart: number; atEnd: number };
  /** Wall time of each part of the measurements (the build before them not included). */
  seconds: Record<string, number>;
  quick: boolean;
  memoryPlan: { warmup: number; repeats: number };
  sqlitePlan: SqlitePlan;
  rows: MemoryRow[];
  sqlite: SqliteRow[];
  postgres: PostgresResults;
}

/** The results as the Markdown of results.md. */
export function renderReport(results: BenchResults): string {
  const { machine, load, seconds, quick, memoryPlan } = results;
  return [
    `# tenxgraph benchmark${quick ? " (quick)" : ""}`,
    "",
    `Machine: ${machine}; 1-minute load average ${load.atStart.toFixed(1)} at the start, ${load.atEnd.toFixed(1)} at the end; ${durations(seconds)}.`,
    "",
    "## In-memory store",
    "",
    `Median of ${memoryPlan.repeats} runs after ${memoryPlan.warmup} warm-up runs.`,
    "",
    ...memoryTable(results.rows),
    "",
    "ms per tool call spreads the tools step over its calls (a turn is a model step and a tools step).",
    "The floor is the same loop with no runtime (no store, ledger, deadline, event or copy).",
    "",
    "## SQLite store (`@tenxgraph/sqlite`)",
    "",
    ...sqliteTable(results.sqlite),
    "",
    ...statementTable(results.sqlite.filter((r) => r.synchronous === "FULL" && r.turns === 50)),
    "",
    ...howSqliteWasMeasured(results.sqlitePlan),
    "",
    ...renderPostgres(results.postgres),
  ].join("\n");
}

/** `measured in 380 s (memory 9 s, sqlite 95 s, postgres 276 s)`. */
function durations(seconds: Record<string, number>): string {
  const total = Object.values(seconds).reduce((sum, s) => sum + s, 0);
  const parts = Object.entries(seconds).map(([part, s]) => `${part} ${s} s`);
  return `measured in ${total} s (${parts.join(", ")})`;
}

function memoryTable(rows: MemoryRow[]): string[] {
  return [
    "| store | turns | tools/turn | steps/run | ms per step | ms per tool call | floor ms per step | overhead ms per step | tenxgraph / floor |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.store} | ${r.turns} | ${r.toolsPerTurn} | ${r.steps} | ${r.msPerStep.toFixed(4)} | ${r.msPerToolCall.toFixed(4)} | ${r.floorMsPerStep.toFixed(4)} | ${(r.msPerStep - r.floorMsPerStep).toFixed(4)} | ${(r.msPerStep / r.floorMsPerStep).toFixed(1)}x |`,
    ),
  ];
}

function sqliteTable(rows: SqliteRow[]): string[] {
  return [
    "| synchronous | turns | tools/turn | steps/run | runs | ms per step | raw FULL commit ms | step / raw commit | ms per putCheckpoint | ledger ms per tool call | commits per step | pages per commit | statements per step | bytes per step |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.synchronous} | ${r.turns} | ${r.toolsPerTurn} | ${r.steps} | ${r.runs} | ${r.msPerStep.toFixed(3)} | ${r.rawFullCommitMs.toFixed(3)} | ${r.ratio.toFixed(1)}x | ${r.msPerWrite.toFixed(3)} | ${r.ledgerMsPerToolCall.toFixed(3)} | ${r.account.commitsPerStep.toFixed(2)} | ${r.account.pagesPerCommit.toFixed(1)} | ${r.account.statementsPerStep.toFixed(1)} | ${Math.round(r.account.bytesPerStep)} |`,
    ),
  ];
}

/** Executions per step of each statement, one column per workload. */
function statementTable(rows: SqliteRow[]): string[] {
  if (rows.length === 0) return [];
  const sqls = [...new Set(rows.flatMap((r) => Object.keys(r.account.statementsPerStepBySql)))];
  const perStep = (r: SqliteRow, sql: string) => r.account.statementsPerStepBySql[sql] ?? 0;
  return [
    "Statements per step, by statement (first words):",
    "",
    `| statement | ${rows.map((r) => `${r.turns} turns, ${r.toolsPerTurn} tool${r.toolsPerTurn === 1 ? "" : "s"}/turn`).join(" | ")} |`,
    `|---|${rows.map(() => "---").join("|")}|`,
    ...sqls.map(
      (sql) => `| \`${sql}\` | ${rows.map((r) => perStep(r, sql).toFixed(2)).join(" | ")} |`,
    ),
  ];
}

function howSqliteWasMeasured(plan: SqlitePlan): string[] {
  return [
    "**How measured.** The ReAct loop above runs on a `SqliteCheckpointer` file in the OS temp folder",
    "(WAL; per step one `BEGIN IMMEDIATE` transaction for `putCheckpoint`, per tool node one for the",
    "claims, per completed call one autocommit UPDATE). The workloads take turns, a round at a time",
    `(warm-up rounds: ${plan.warmupRounds}, measured rounds: ${plan.rounds}; about ${plan.stepsPerRound} steps of each workload`,
    "per round, so short loops run several times), so a busy spell of the shared machine falls on all",
    "rows alike. Each timed run is followed by as many raw commits as it took steps: better-sqlite3",
    "alone, `BEGIN IMMEDIATE`, one INSERT of a row as large as the bytes a step adds to the file,",
    "`COMMIT`, on a WAL file of its own with `synchronous=FULL`. *ms per step* and *raw FULL commit*",
    "are medians over the runs; *step / raw commit* is the median over runs of the run's ms per step",
    "divided by the raw commit measured right after it (the goal is at most 2x; NORMAL rows are",
    "divided by the same FULL commit, to show what skipping the fsync buys). *ms per",
    "putCheckpoint* and *ledger ms per tool call* (ledger read, claim, completion, heartbeats) are",
    "medians over runs of the time spent inside those store methods (better-sqlite3 is synchronous,",
    "so that is the store's whole work). The counts come from an untimed pass on a fresh",
    `file (runs repeated until it has at least ${plan.accountSteps} steps). *Statements*: every statement`,
    "better-sqlite3 executed (each run/get/all/iterate of a prepared statement, including the BEGIN",
    "and COMMIT of its transactions, counted by wrapping the driver's Statement prototype, since",
    "the checkpointer has no statement hook). *Commits*: the commit frames in the WAL file, which a",
    "read transaction held open on a second connection keeps from being checkpointed and reset;",
    "*pages per commit* is the WAL frames over those commits (each is a page image the commit",
    "writes and, under FULL, fsyncs).",
    "*Bytes*: the growth of the database file after `PRAGMA wal_checkpoint(TRUNCATE)` on a second",
    "connection, divided by the steps. Per-step counts include each run's fixed work (reading the",
    "thread and its stop requests, writing its input).",
  ];
}
