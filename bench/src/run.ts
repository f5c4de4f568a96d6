import { writeFileSync } from "node:fs";
import os from "node:os";
import { measureMemory, type MemoryRow } from "./measure/measure-memory.js";
import { renderReport } from "./report/render-report.js";
import { measureSqlite, type SqlitePlan, type SqliteWorkload } from "./measure/measure-sqlite.js";
import { measurePostgres, type PgPlan } from "./measure/measure-postgres.js";
import type { PgStore, PgWorkload } from "./tenxgraph/pg-stores.js";

/**
 * `npm run bench [-- --quick]`: engine overhead per node step for a ReAct loop with 1 and 4
 * trivial tools per turn, on the in-memory store (50 turns, beside a loop with no runtime) and
 * on SQLite (5, 50 and 200 turns, beside one raw synchronous=FULL commit per step) and on
 * PostgreSQL, alone and with Redis (5, 50 and 200 turns beside one raw autocommit INSERT on the
 * same server; 1 thread against 8). Medians over repeated runs after a warm-up; no assertions,
 * figures only. Writes bench/results.md and bench/results.json (`--quick`: a subset, to
 * bench/results-quick.*, which git ignores). PostgreSQL and Redis are started here unless
 * TENXGRAPH_BENCH_POSTGRES_DSN / TENXGRAPH_BENCH_REDIS_URL name servers to use.
 */
const quick = process.argv.includes("--quick");
const memoryPlan = { warmup: quick ? 2 : 10, repeats: quick ? 5 : 40 };
const sqlitePlan: SqlitePlan = {
  warmupRounds: quick ? 1 : 3,
  rounds: quick ? 3 : 30,
  stepsPerRound: 100,
  // Enough steps that whole pages fill up, so bytes per step is not a page's rounding.
  accountSteps: quick ? 100 : 400,
};
const sqliteWorkloads: SqliteWorkload[] = quick
  ? [
      { synchronous: "FULL", turns: 5, toolsPerTurn: 1 },
      { synchronous: "FULL", turns: 50, toolsPerTurn: 4 },
      { synchronous: "NORMAL", turns: 50, toolsPerTurn: 4 },
    ]
  : [
      ...[5, 50, 200].flatMap((turns) =>
        [1, 4].map((toolsPerTurn): SqliteWorkload => ({
          synchronous: "FULL",
          turns,
          toolsPerTurn,
        })),
      ),
      { synchronous: "NORMAL", turns: 50, toolsPerTurn: 1 },
      { synchronous: "NORMAL", turns: 50, toolsPerTurn: 4 },
    ];

const pgStores: PgStore[] = ["postgres", "postgres+redis"];
const pgPlan: PgPlan = {
  warmupRounds: quick ? 1 : 2,
  rounds: quick ? 2 : 15,
  stepsPerRound: 100,
  // 8 KiB pages: enough steps that their rounding is a few bytes per step.
  accountSteps: quick ? 100 : 1200,
  concurrency: {
    warmupRounds: quick ? 0 : 1,
    rounds: quick ? 1 : 8,
    threads: 8,
    runsPerThread: 1,
    rawCommitsPerConnection: quick ? 50 : 200,
  },
};
const pgWorkloads: PgWorkload[] = quick
  ? [
      { store: "postgres", turns: 5, toolsPerTurn: 1 },
      { store: "postgres+redis", turns: 5, toolsPerTurn: 4 },
    ]
  : pgStores.flatMap((store) =>
      [5, 50, 200].flatMap((turns) =>
        [1, 4].map((toolsPerTurn): PgWorkload => ({ store, turns, toolsPerTurn })),
      ),
    );
const pgConcurrencyWorkloads: PgWorkload[] = pgStores.flatMap((store) =>
  (quick ? [1] : [1, 4]).map((toolsPerTurn) => ({ store, turns: quick ? 5 : 50, toolsPerTurn })),
);

/** Seconds each part of the bench took, printed as it goes. */
const seconds: Record<string, number> = {};
async function timed<T>(part: string, measure: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await measure();
  } finally {
    seconds[part] = Math.round((performance.now() - started) / 1000);
    console.error(`bench: ${part} took ${seconds[part]} s`);
  }
}

// Other work on a shared machine moves every figure; the load says how busy it was.
const loadAtStart = os.loadavg()[0]!;
const rows = await timed("memory", async () => {
  const measured: MemoryRow[] = [];
  for (const toolsPerTurn of [1, 4])
    measured.push(await measureMemory({ turns: 50, toolsPerTurn }, memoryPlan));
  return measured;
});
const sqlite = await timed("sqlite", () => measureSqlite(sqliteWorkloads, sqlitePlan));
const postgres = await timed("postgres", () =>
  measurePostgres(pgWorkloads, pgConcurrencyWorkloads, pgPlan),
);

const memory = `${Math.round(os.totalmem() / 2 ** 30)} GiB`;
const machine = `${os.cpus()[0]?.model ?? "cpu"} x${os.cpus().length}, ${memory}, ${os.type()} ${os.release()}, Node ${process.version}`;
const load = { atStart: loadAtStart, atEnd: os.loadavg()[0]! };
const results = { machine, load, seconds, quick, memoryPlan, sqlitePlan, rows, sqlite, postgres };
const report = renderReport(results);
const out = new URL("../", import.meta.url);
// A quick run is a smoke check; it must not replace the committed figures.
const name = quick ? "results-quick" : "results";
writeFileSync(new URL(`${name}.md`, out), report);
writeFileSync(new URL(`${name}.json`, out), JSON.stringify(results, null, 2) + "\n");
console.log(report);
