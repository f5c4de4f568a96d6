import type { BenchResults } from "./bench-results.js";
import { groupBy, range, table, toolsLabel, yesNo } from "./format.js";

/** The engine's performance goals; the verdicts only read the figures against them. */
const GOALS = {
  /** tenxgraph on PostgreSQL / LangGraph.js PostgresSaver (durability "sync"), per step. */
  maxPgRatio: 0.2,
  /** tenxgraph on PostgreSQL / one raw commit of the same size on the same server. */
  maxPgFloorRatio: 2,
  /** tenxgraph on SQLite / LangGraph.js SqliteSaver as a user opens it. */
  maxSqliteRatio: 0.3,
  /** tenxgraph on the in-memory store, ms per step. */
  maxMemoryMsPerStep: 0.1,
  /** Bytes per step at 200 turns over those at 5 turns. */
  maxBytesGrowth: 1.2,
};

/** The goals table: each goal, the figures it is read against, and whether it is met. */
export function renderGoals(results: BenchResults): string[] {
  const postgres = results.postgres.rows.filter((r) => r.store === "postgres");
  const sqlite = results.sqlite.filter((r) => r.synchronous === "FULL");
  const pgRatios = postgres.flatMap((r) => (r.times.ratio === null ? [] : [r.times.ratio]));
  const pgFloor = postgres.map((r) => r.times.tenxgraph.floorRatio);
  const sqliteRatios = sqlite.flatMap((r) => (r.times.ratio === null ? [] : [r.times.ratio]));
  const memory = results.memory.map((r) => r.times.tenxgraph.msPerStep);
  const withRedis = results.postgres.rows.filter((r) => r.store === "postgres+redis");
  return table(
    ["goal", "figures", "met"],
    [
      [
        `PostgreSQL: per durable step at most ${GOALS.maxPgRatio}x LangGraph.js PostgresSaver (durability "sync")`,
        `${range(pgRatios, 2, "x")} over ${pgRatios.length} workloads`,
        verdict(pgRatios, (v) => v <= GOALS.maxPgRatio),
      ],
      [
        `PostgreSQL: per durable step at most ${GOALS.maxPgFloorRatio}x one raw commit of the same size, ledger included`,
        `${range(pgFloor, 1, "x")} (with Redis ${range(
          withRedis.map((r) => r.times.tenxgraph.floorRatio),
          1,
          "x",
        )})`,
        verdict(pgFloor, (v) => v <= GOALS.maxPgFloorRatio),
      ],
      [
        `SQLite: per step at most ${GOALS.maxSqliteRatio}x LangGraph.js SqliteSaver (each as a user opens it: ours at synchronous=FULL, SqliteSaver at NORMAL)`,
        `${range(sqliteRatios, 2, "x")}; like for like at NORMAL: ${range(
          results.sqlite
            .filter((r) => r.synchronous === "NORMAL")
            .flatMap((r) => (r.times.ratio === null ? [] : [r.times.ratio])),
          2,
          "x",
        )}`,
        verdict(sqliteRatios, (v) => v <= GOALS.maxSqliteRatio),
      ],
      [
        `Engine alone (in-memory store): at most ${GOALS.maxMemoryMsPerStep} ms per step`,
        `${range(memory, 3, " ms")}`,
        verdict(memory, (v) => v <= GOALS.maxMemoryMsPerStep),
      ],
      bytesGoal(results),
    ],
  );
}

/** Bytes per step at the longest thread over the shortest, tenxgraph on each durable store. */
function bytesGoal(results: BenchResults): string[] {
  type AccountRow = (typeof results.sqlite)[number] | (typeof results.postgres.rows)[number];
  const byTools = (store: string, rows: AccountRow[]) =>
    groupBy(rows, (r) => `${store}, ${toolsLabel(r.toolsPerTurn)}`).map(([name, group]) => ({
      name,
      rows: group.map((r) => ({
        turns: r.turns,
        tx: r.accounts.tenxgraph,
        lg: r.accounts.langgraph,
      })),
    }));
  const series = [
    ...byTools(
      "SQLite",
      results.sqlite.filter((r) => r.synchronous === "FULL"),
    ),
    ...byTools(
      "PostgreSQL",
      results.postgres.rows.filter((r) => r.store === "postgres"),
    ),
  ];
  const growths = series.flatMap(({ name, rows }) => {
    const sorted = [...rows].sort((a, b) => a.turns - b.turns);
    const first = sorted[0]!;
    const last = sorted.at(-1)!;
    if (first.turns === last.turns) return [];
    const growth = last.tx.bytesPerStep / first.tx.bytesPerStep;
    const lg = first.lg && last.lg ? last.lg.bytesPerStep / first.lg.bytesPerStep : null;
    const text = `${name}: ${Math.round(first.tx.bytesPerStep)} → ${Math.round(last.tx.bytesPerStep)} (${growth.toFixed(2)}x; LangGraph.js ${lg === null ? "n/a" : `${lg.toFixed(1)}x`})`;
    return [{ growth, text, turns: `${first.turns} → ${last.turns}` }];
  });
  const goal = `Bytes per step at the longest thread within ${GOALS.maxBytesGrowth}x of the shortest`;
  if (growths.length === 0) return [goal, "one thread length only", "n/a"];
  return [
    `${goal} (${growths[0]!.turns} turns)`,
    growths.map((g) => g.text).join("; "),
    verdict(
      growths.map((g) => g.growth),
      (v) => v <= GOALS.maxBytesGrowth,
    ),
  ];
}

function verdict(values: number[], met: (value: number) => boolean): string {
  return values.length === 0 ? "n/a" : yesNo(values.every(met));
}
