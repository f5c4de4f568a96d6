import type { PostgresResults } from "../measure/measure-postgres.js";
import type { ConcurrencyRow, CpuPerStep } from "../measure/concurrency.js";
import type { PgRow } from "../measure/pg-workload-bench.js";

/** Issue 4's goals, as stated there; the verdicts below only read the figures against them. */
const GOALS = {
  maxRatio: 2,
  /** "Flat": bytes per step at 5, 50 and 200 turns within 10% of each other. */
  maxBytesSpread: 1.1,
  minSpeedup: 3,
};

/** The PostgreSQL section of results.md. */
export function renderPostgres(results: PostgresResults): string[] {
  return [
    "## PostgreSQL store (`@tenxgraph/postgres`)",
    "",
    serverLine(results),
    "",
    ...warningLines(results.warnings),
    "### Issue 4's goals",
    "",
    ...goalTable(results),
    "",
    "### Durable step against one raw commit",
    "",
    ...stepTable(results.rows),
    "",
    "### One thread against 8",
    "",
    ...concurrencyTable(results.concurrency),
    "",
    ...statementTable(results.rows.filter((r) => r.store === "postgres" && r.turns === 50)),
    "",
    ...bytesTable(results.rows.filter((r) => r.store === "postgres")),
    "",
    ...howMeasured(results),
    "",
  ];
}

function serverLine({ server, redis, drivers }: PostgresResults): string {
  const by = (started: boolean, variable: string) =>
    started ? "started by the bench" : `given by ${variable}`;
  const settings = Object.entries(server.settings)
    .map(([name, value]) => `${name}=${value}`)
    .join(", ");
  return [
    `Server: PostgreSQL ${server.version}, ${by(server.startedByBench, "TENXGRAPH_BENCH_POSTGRES_DSN")} (${settings}).`,
    `Redis ${redis.version}, ${by(redis.startedByBench, "TENXGRAPH_BENCH_REDIS_URL")}${redis.startedByBench ? " (no persistence)" : ""}.`,
    `Drivers: pg ${drivers.pg}, ioredis ${drivers.ioredis}. fsync stays on: durability is what is measured.`,
  ].join("\n");
}

function warningLines(warnings: string[]): string[] {
  if (warnings.length === 0) return [];
  const shown = [...new Set(warnings)].slice(0, 5).map((w) => `- ${w}`);
  return [`**The stores logged ${warnings.length} warnings** (figures may be off):`, ...shown, ""];
}

function goalTable({ rows, concurrency }: PostgresResults): string[] {
  return [
    "| goal | figures | met |",
    "|---|---|---|",
    ratioGoal(rows),
    bytesGoal(rows),
    speedupGoal(concurrency),
  ];
}

function ratioGoal(rows: PgRow[]): string {
  const byStore = groupBy(rows, (r) => r.store).map(
    ([store, group]) =>
      `${store} ${range(
        group.map((r) => r.ratio),
        1,
        "x",
      )}`,
  );
  const met = rows.every((r) => r.ratio <= GOALS.maxRatio);
  return `| per durable step at most ${GOALS.maxRatio}x one raw commit, ledger included | ${byStore.join("; ")} | ${yesNo(met)} |`;
}

function bytesGoal(rows: PgRow[]): string {
  const series = groupBy(
    rows.filter((r) => r.store === "postgres"),
    (r) => `${r.toolsPerTurn}`,
  ).map(([tools, group]) => {
    const sorted = [...group].sort((a, b) => a.turns - b.turns);
    const bytes = sorted.map((r) => r.account.bytesPerStep);
    const figures = sorted.map((r) => `${Math.round(r.account.bytesPerStep)}`).join(" / ");
    return { text: `${toolsLabel(Number(tools))}: ${figures}`, spread: spread(bytes) };
  });
  const turnsMeasured = [...new Set(rows.map((r) => r.turns))].sort((a, b) => a - b);
  const turns = turnsMeasured.join("/");
  if (turnsMeasured.length < 2)
    return `| bytes per step flat in thread length | one thread length only (${turns} turns) | n/a |`;
  const met = series.every((s) => s.spread <= GOALS.maxBytesSpread);
  const spreads = series.map((s) => `${((s.spread - 1) * 100).toFixed(0)}%`).join(", ");
  return `| bytes per step flat in thread length (within 10% at ${turns} turns) | ${series.map((s) => s.text).join("; ")} (spread ${spreads}) | ${yesNo(met)} |`;
}

function speedupGoal(rows: ConcurrencyRow[]): string {
  const figures = rows.map(
    (r) =>
      `${r.store}, ${toolsLabel(r.toolsPerTurn)}: ${r.speedup.toFixed(2)}x (raw commits ${r.rawSpeedup.toFixed(2)}x)`,
  );
  const met = rows.every((r) => r.speedup >= GOALS.minSpeedup);
  const threads = rows[0]?.threads ?? 8;
  return `| ${threads} threads at least ${GOALS.minSpeedup}x one thread's steps per second | ${figures.join("; ")} | ${yesNo(met)} |`;
}

function stepTable(rows: PgRow[]): string[] {
  return [
    "| store | turns | tools/turn | steps/run | runs | ms per step | raw commit ms | step / raw commit | ms per putCheckpoint | ledger ms per tool call | round trips per step | commits per step | Redis commands per step | table bytes per step | with FSM/VM | WAL bytes per step |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => {
      const a = r.account;
      return `| ${r.store} | ${r.turns} | ${r.toolsPerTurn} | ${r.steps} | ${r.runs} | ${r.msPerStep.toFixed(3)} | ${r.rawCommitMs.toFixed(3)} | ${r.ratio.toFixed(1)}x | ${r.msPerWrite.toFixed(3)} | ${r.ledgerMsPerToolCall.toFixed(3)} | ${a.roundTripsPerStep.toFixed(2)} | ${fixed(a.commitsPerStep, 2)} | ${a.redisCommandsPerStep.toFixed(2)} | ${Math.round(a.bytesPerStep)} | ${Math.round(a.totalBytesPerStep)} | ${Math.round(a.walBytesPerStep)} |`;
    }),
  ];
}

function concurrencyTable(rows: ConcurrencyRow[]): string[] {
  const n = rows[0]?.threads ?? 8;
  return [
    `| store | turns | tools/turn | pool | 1 thread steps/s | ${n} threads steps/s | ${n} / 1 | raw commits/s, 1 connection | ${n} connections | raw ${n} / 1 | node CPU ms/step, 1 → ${n} | PostgreSQL CPU ms/step, 1 → ${n} | Redis CPU ms/step, 1 → ${n} | machine CPU busy, 1 → ${n} |`,
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.store} | ${r.turns} | ${r.toolsPerTurn} | ${r.poolMax} | ${Math.round(r.oneThreadStepsPerSecond)} | ${Math.round(r.manyThreadsStepsPerSecond)} | ${r.speedup.toFixed(2)}x | ${Math.round(r.rawOneConnectionCommitsPerSecond)} | ${Math.round(r.rawManyConnectionsCommitsPerSecond)} | ${r.rawSpeedup.toFixed(2)}x | ${cpuPair(r, (c) => c.nodeMsPerStep)} | ${cpuPair(r, (c) => c.postgresMsPerStep)} | ${cpuPair(r, (c) => c.redisMsPerStep)} | ${busyPair(r)} |`,
    ),
  ];
}

/** Executions per step of each statement, the PL/pgSQL functions' own statements indented. */
function statementTable(rows: PgRow[]): string[] {
  const withStats = rows.filter((r) => r.account.serverStatements);
  if (withStats.length === 0) return roundTripTable(rows);
  const keyOf = (s: { sql: string; nested: boolean }) => `${s.nested ? "↳ " : ""}${s.sql}`;
  const statements = new Map(
    withStats.flatMap((r) => r.account.serverStatements!.map((s) => [keyOf(s), s] as const)),
  );
  const perStep = (r: PgRow, key: string) =>
    r.account.serverStatements!.find((s) => keyOf(s) === key)?.perStep ?? 0;
  const meanMs = (key: string) => statements.get(key)?.meanMs ?? 0;
  return [
    "Statements per step, by statement (pg_stat_statements; ↳ runs inside a function; first words):",
    "",
    `| statement | ${withStats.map(workloadLabel).join(" | ")} | mean server ms (${workloadLabel(withStats[0]!)}) |`,
    `|---|${withStats.map(() => "---").join("|")}|---|`,
    ...[...statements.keys()].map(
      (key) =>
        `| \`${key}\` | ${withStats.map((r) => perStep(r, key).toFixed(2)).join(" | ")} | ${meanMs(key).toFixed(3)} |`,
    ),
  ];
}

/** Without pg_stat_statements: the client's queries only. */
function roundTripTable(rows: PgRow[]): string[] {
  if (rows.length === 0) return [];
  const sqls = [...new Set(rows.flatMap((r) => Object.keys(r.account.roundTripsPerStepBySql)))];
  return [
    "Round trips per step, by statement (first words):",
    "",
    `| statement | ${rows.map(workloadLabel).join(" | ")} |`,
    `|---|${rows.map(() => "---").join("|")}|`,
    ...sqls.map(
      (sql) =>
        `| \`${sql}\` | ${rows.map((r) => (r.account.roundTripsPerStepBySql[sql] ?? 0).toFixed(2)).join(" | ")} |`,
    ),
  ];
}

function bytesTable(rows: PgRow[]): string[] {
  if (rows.length === 0) return [];
  const tables = [...new Set(rows.flatMap((r) => Object.keys(r.account.bytesPerStepByTable)))];
  return [
    "Table bytes per step, by table with its indexes and TOAST (main forks; PostgreSQL alone):",
    "",
    `| table | ${rows.map(workloadLabel).join(" | ")} |`,
    `|---|${rows.map(() => "---").join("|")}|`,
    ...tables.map(
      (table) =>
        `| ${table} | ${rows.map((r) => Math.round(r.account.bytesPerStepByTable[table] ?? 0)).join(" | ")} |`,
    ),
  ];
}

function howMeasured({ plan, server }: PostgresResults): string[] {
  const { concurrency: c } = plan;
  return [
    "**How measured.** The ReAct loop of the sections above runs on `PgCheckpointer` (default pool",
    "of 10, each workload in a schema of its own; with Redis, `redisUrl` set too). Per step one",
    "`tenxgraph_put_checkpoint` call (one statement, one transaction); per tool node one ledger read",
    "and one `tenxgraph_claim_calls` call; the completions of sibling calls are one group-committed",
    "UPDATE. The workloads take turns, a round at a time (warm-up rounds:",
    `${plan.warmupRounds}, measured rounds: ${plan.rounds}; about ${plan.stepsPerRound} steps of each workload per round), so a busy spell of`,
    "the shared machine falls on all rows alike. Each timed run is followed by as many raw commits",
    "as it took steps: `pg` alone, one autocommit `INSERT` of a row of random text as long as the",
    "bytes a step adds to the tables, on the same server, into a scratch table. *step / raw commit*",
    "is the median over runs of the run's ms per step divided by the raw commit measured right",
    "after it. *ms per putCheckpoint* and *ledger ms per tool call* are medians over runs of the",
    "time from a call until its promise settled (round trips included; calls in flight together",
    "count once; the ledger's time is spread over the node's calls).",
    `The counts come from an untimed pass on a fresh schema (runs repeated until at least ${plan.accountSteps}`,
    "steps, after one uncounted run). *Round trips*: every `Client.query` of `pg` and every command of",
    "ioredis, counted by wrapping the drivers' prototypes (the store has no statement hook); each",
    "query is one statement and one round trip. *Commits*: the `Transaction/COMMIT` records",
    `in the WAL between the flushed positions before and after the pass (pg_walinspect${server.walInspect ? "" : ", not available on this server"}), i.e. the`,
    "writing transactions; read-only statements commit nothing to flush. *Statements*: pg_stat_statements",
    `(track = ${server.statementTracking ?? "not available"}), reset before the pass, so the functions' inner statements and the`,
    "foreign-key checks show too; it stays loaded while timing, raw commits included (a few",
    "microseconds per statement). *Table bytes*: growth of `pg_relation_size` of each table, its",
    "indexes and its TOAST table (main forks), divided by the steps; *with FSM/VM* is",
    "`pg_total_relation_size`. *WAL bytes*: the advance of the flushed WAL position, whole server",
    "(full-page images after a checkpoint included). Autovacuum runs as configured by default.",
    `*One thread against ${c.threads}*: per round, one thread makes ${runs(c.runsPerThread)} of the workload (each a`,
    `fresh thread), then ${c.threads} threads do the same at once in this process on one checkpointer`,
    `(one pool); then ${c.rawCommitsPerConnection} raw commits (600-byte rows) on one connection, and as many on each of`,
    `${c.threads} connections at once (warm-up rounds: ${c.warmupRounds}, measured rounds: ${c.rounds}; medians, the ratios`,
    "per round). *CPU*: `process.cpuUsage()` for node, `/proc` for the PostgreSQL server's",
    "processes (when the bench started it), `INFO cpu` for Redis, and `/proc/stat` for the whole",
    "machine (busy share of all its CPUs, steal and other tenants included).",
  ];
}

function runs(count: number): string {
  return count === 1 ? "one run" : `${count} runs, back to back,`;
}

function cpuPair(row: ConcurrencyRow, pick: (cpu: CpuPerStep) => number | null): string {
  const one = pick(row.oneThreadCpu);
  const many = pick(row.manyThreadsCpu);
  return one === null || many === null ? "n/a" : `${one.toFixed(2)} → ${many.toFixed(2)}`;
}

function busyPair(row: ConcurrencyRow): string {
  const one = row.oneThreadCpu.machineBusy;
  const many = row.manyThreadsCpu.machineBusy;
  const percent = (v: number) => `${Math.round(v * 100)}%`;
  return one === null || many === null ? "n/a" : `${percent(one)} → ${percent(many)}`;
}

function workloadLabel(r: { turns: number; toolsPerTurn: number }): string {
  return `${r.turns} turns, ${toolsLabel(r.toolsPerTurn)}`;
}

function toolsLabel(tools: number): string {
  return `${tools} tool${tools === 1 ? "" : "s"}/turn`;
}

function range(values: number[], digits: number, unit: string): string {
  const low = Math.min(...values).toFixed(digits);
  const high = Math.max(...values).toFixed(digits);
  return low === high ? `${low}${unit}` : `${low}${unit}–${high}${unit}`;
}

/** The largest value over the smallest. */
function spread(values: number[]): number {
  return Math.max(...values) / Math.min(...values);
}

function groupBy<T>(items: T[], key: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return [...groups];
}

function fixed(value: number | null, digits: number): string {
  return value === null ? "n/a" : value.toFixed(digits);
}

function yesNo(met: boolean): string {
  return met ? "**yes**" : "**no**";
}
