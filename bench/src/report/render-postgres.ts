import type { PgAccount } from "../accounting/pg-account.js";
import type { PostgresResults } from "../measure/measure-postgres.js";
import type { PgRow } from "../measure/pg-workload-bench.js";
import { fixed, table, toolsLabel, whole, workloadLabel } from "./format.js";
import { timingTable } from "./render-timings.js";

/** The PostgreSQL section: the server, the timings, the counts, the statements, the bytes. */
export function renderPostgres(results: PostgresResults): string[] {
  const alone = results.rows.filter((r) => r.store === "postgres");
  return [
    "## PostgreSQL: `PgCheckpointer` beside `PostgresSaver`",
    "",
    serverLine(results),
    "",
    ...warningLines(results.warnings),
    ...timingTable(
      ["store", "turns", "tools"],
      "raw commit",
      results.rows.map((r) => ({
        labels: [r.store, `${r.turns}`, toolsLabel(r.toolsPerTurn)],
        steps: r.steps,
        times: r.times,
      })),
    ),
    "",
    "Counts per step (untimed pass on a fresh schema of each runtime's own):",
    "",
    ...countTable(results.rows),
    "",
    ...statementTables(alone.filter((r) => r.turns === 50)),
    ...bytesTables(alone),
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
    'LangGraph.js runs `PostgresSaver.fromConnString(dsn, { schema })` after `setup()`, with `durability: "sync"`;',
    "it has no Redis saver, so the PostgreSQL + Redis rows are tenxgraph's alone.",
  ].join("\n");
}

function warningLines(warnings: string[]): string[] {
  if (warnings.length === 0) return [];
  const shown = [...new Set(warnings)].slice(0, 5).map((w) => `- ${w}`);
  return [`**The stores logged ${warnings.length} warnings** (figures may be off):`, ...shown, ""];
}

function runtimesOf(r: PgRow): [string, PgAccount][] {
  return [
    ["tenxgraph", r.accounts.tenxgraph],
    ...(r.accounts.langgraph
      ? [["LangGraph.js", r.accounts.langgraph] as [string, PgAccount]]
      : []),
  ];
}

function countTable(rows: PgRow[]): string[] {
  const serverStatements = (a: PgAccount) =>
    a.serverStatements?.reduce((sum, s) => sum + s.perStep, 0) ?? null;
  return table(
    [
      "store",
      "turns",
      "tools",
      "runtime",
      "steps counted",
      "round trips",
      "commits",
      "statements (server, nested too)",
      "Redis commands",
      "table bytes",
      "with FSM/VM",
      "WAL bytes",
    ],
    rows.flatMap((r) =>
      runtimesOf(r).map(([runtime, a]) => [
        r.store,
        `${r.turns}`,
        toolsLabel(r.toolsPerTurn),
        runtime,
        `${a.steps}`,
        fixed(a.roundTripsPerStep, 2),
        fixed(a.commitsPerStep, 2),
        fixed(serverStatements(a), 2),
        fixed(a.redisCommandsPerStep, 2),
        whole(a.bytesPerStep),
        whole(a.totalBytesPerStep),
        whole(a.walBytesPerStep),
      ]),
    ),
  );
}

/** Executions per step of each statement the server ran, one table per runtime. */
function statementTables(rows: PgRow[]): string[] {
  return (["tenxgraph", "langgraph"] as const).flatMap((runtime) => {
    const accounts = rows.flatMap((r) => {
      const a = r.accounts[runtime];
      return a?.serverStatements ? [{ r, statements: a.serverStatements }] : [];
    });
    if (accounts.length === 0) return [];
    const keyOf = (s: { sql: string; nested: boolean }) => `${s.nested ? "↳ " : ""}${s.sql}`;
    const keys = [...new Set(accounts.flatMap((a) => a.statements.map(keyOf)))];
    const find = (a: (typeof accounts)[number], key: string) =>
      a.statements.find((s) => keyOf(s) === key);
    return [
      `Statements per step, ${runtime === "tenxgraph" ? "tenxgraph" : "LangGraph.js"} (pg_stat_statements; ↳ runs inside a function; first words):`,
      "",
      ...table(
        [
          "statement",
          ...accounts.map((a) => workloadLabel(a.r)),
          `mean server ms (${workloadLabel(accounts[0]!.r)})`,
        ],
        keys.map((key) => [
          `\`${key.replaceAll("|", "\\|")}\``,
          ...accounts.map((a) => fixed(find(a, key)?.perStep ?? 0, 2)),
          fixed(find(accounts[0]!, key)?.meanMs, 3),
        ]),
      ),
      "",
    ];
  });
}

/** Table bytes per step by table, one table per runtime. */
function bytesTables(rows: PgRow[]): string[] {
  return (["tenxgraph", "langgraph"] as const).flatMap((runtime) => {
    const accounts = rows.flatMap((r) => {
      const a = r.accounts[runtime];
      return a ? [{ r, a }] : [];
    });
    if (accounts.length === 0) return [];
    const tables = [...new Set(accounts.flatMap(({ a }) => Object.keys(a.bytesPerStepByTable)))];
    return [
      `Table bytes per step, ${runtime === "tenxgraph" ? "tenxgraph" : "LangGraph.js"}, by table with its indexes and TOAST (main forks):`,
      "",
      ...table(
        ["table", ...accounts.map(({ r }) => workloadLabel(r))],
        tables.map((name) => [
          name,
          ...accounts.map(({ a }) => whole(a.bytesPerStepByTable[name] ?? 0)),
        ]),
      ),
      "",
    ];
  });
}
