import type { SqliteAccount } from "../accounting/sqlite-account.js";
import type { SqliteRow } from "../measure/sqlite-workload-bench.js";
import { fixed, table, toolsLabel, whole, workloadLabel } from "./format.js";
import { timingTable } from "./render-timings.js";

/** The SQLite section: the pragmas, the timings, the counts and the statements. */
export function renderSqlite(rows: SqliteRow[]): string[] {
  return [
    "## SQLite: `SqliteCheckpointer` beside `SqliteSaver`",
    "",
    ...pragmaLines(rows),
    "",
    ...timingTable(
      ["tenxgraph synchronous", "turns", "tools"],
      "raw FULL commit",
      rows.map((r) => ({
        labels: [r.synchronous, `${r.turns}`, toolsLabel(r.toolsPerTurn)],
        steps: r.steps,
        times: r.times,
      })),
    ),
    "",
    "Counts per step (untimed pass on a fresh file of each runtime's own):",
    "",
    ...countTable(rows),
    "",
    ...statementTables(rows.filter((r) => r.synchronous === "FULL" && r.turns === 50)),
  ];
}

/** What each store's connection ran with, read from the files and connections of the bench. */
function pragmaLines(rows: SqliteRow[]): string[] {
  const ours = rows.map((r) => r.accounts.tenxgraph);
  const theirs = rows.flatMap((r) => (r.accounts.langgraph ? [r.accounts.langgraph] : []));
  const settings = (accounts: SqliteAccount[]) =>
    [
      ...new Set(
        accounts.map((a) => `journal_mode=${a.journalMode}, synchronous=${a.synchronous}`),
      ),
    ].join(" / ");
  return [
    `Pragmas as measured: tenxgraph \`SqliteCheckpointer\` ${settings(ours)} (WAL and FULL by default; the NORMAL rows set \`synchronous: "NORMAL"\`).`,
    `LangGraph.js \`SqliteSaver.fromConnString(path)\` ${settings(theirs) || "n/a"}: its \`setup()\` sets \`journal_mode=WAL\` and`,
    "never sets `synchronous`; better-sqlite3 is compiled with `SQLITE_DEFAULT_WAL_SYNCHRONOUS=1`, so its",
    "WAL connection runs at NORMAL: a commit does not wait for an fsync, and the last commits can be",
    "lost on a power failure or OS crash. The FULL rows compare each store as a user opens it; the",
    "NORMAL rows compare the same durability.",
  ];
}

function countTable(rows: SqliteRow[]): string[] {
  const lines = rows.flatMap((r) =>
    (
      [
        ["tenxgraph", r.accounts.tenxgraph],
        ["LangGraph.js", r.accounts.langgraph],
      ] as const
    ).flatMap(([runtime, a]) =>
      a
        ? [
            [
              r.synchronous,
              `${r.turns}`,
              toolsLabel(r.toolsPerTurn),
              runtime,
              `${a.steps}`,
              fixed(a.statementsPerStep, 1),
              fixed(a.commitsPerStep, 2),
              fixed(a.pagesPerCommit, 1),
              whole(a.bytesPerStep),
              whole(a.walBytesPerStep),
            ],
          ]
        : [],
    ),
  );
  return table(
    [
      "tenxgraph synchronous",
      "turns",
      "tools",
      "runtime",
      "steps counted",
      "statements",
      "commits",
      "pages per commit",
      "file bytes",
      "WAL bytes",
    ],
    lines,
  );
}

/** Executions per step of each statement, one column per workload, one table per runtime. */
function statementTables(rows: SqliteRow[]): string[] {
  if (rows.length === 0) return [];
  return (["tenxgraph", "langgraph"] as const).flatMap((runtime) => {
    const accounts = rows.flatMap((r) => {
      const account = r.accounts[runtime];
      return account ? [{ r, account }] : [];
    });
    if (accounts.length === 0) return [];
    const sqls = [
      ...new Set(accounts.flatMap((a) => Object.keys(a.account.statementsPerStepBySql))),
    ];
    return [
      `Statements per step, ${runtime === "tenxgraph" ? "tenxgraph" : "LangGraph.js"} (first words):`,
      "",
      ...table(
        ["statement", ...accounts.map((a) => workloadLabel(a.r))],
        sqls.map((sql) => [
          `\`${sql.replaceAll("|", "\\|")}\``,
          ...accounts.map((a) => fixed(a.account.statementsPerStepBySql[sql] ?? 0, 2)),
        ]),
      ),
      "",
    ];
  });
}
