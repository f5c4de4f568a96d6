import { writeFileSync } from "node:fs";
import os from "node:os";
import { measureMemory, type MemoryRow } from "./measure-memory.js";
import { renderReport } from "./render-report.js";
import { measureSqlite, type SqlitePlan, type SqliteWorkload } from "./measure-sqlite.js";

/**
 * `npm run bench [-- --quick]`: engine overhead per node step for a ReAct loop with 1 and 4
 * trivial tools per turn, on the in-memory store (50 turns, beside a loop with no runtime) and
 * on SQLite (5, 50 and 200 turns, beside one raw synchronous=FULL commit per step). Medians over
 * repeated runs after a warm-up; no assertions, figures only. Writes bench/results.md and
 * bench/results.json (`--quick`: a subset, to bench/results-quick.*, which git ignores).
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

// Other work on a shared machine moves every figure; the load says how busy it was.
const loadAtStart = os.loadavg()[0]!;
const rows: MemoryRow[] = [];
for (const toolsPerTurn of [1, 4])
  rows.push(await measureMemory({ turns: 50, toolsPerTurn }, memoryPlan));
const sqlite = await measureSqlite(sqliteWorkloads, sqlitePlan);

const machine = `${os.cpus()[0]?.model ?? "cpu"} x${os.cpus().length}, Node ${process.version}`;
const load = { atStart: loadAtStart, atEnd: os.loadavg()[0]! };
const results = { machine, load, quick, memoryPlan, sqlitePlan, rows, sqlite };
const report = renderReport(results);
const out = new URL("../", import.meta.url);
// A quick run is a smoke check; it must not replace the committed figures.
const name = quick ? "results-quick" : "results";
writeFileSync(new URL(`${name}.md`, out), report);
writeFileSync(new URL(`${name}.json`, out), JSON.stringify(results, null, 2) + "\n");
console.log(report);
