import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { httpPlan } from "./http/http-plan.js";
import { measureHttp } from "./http/measure-http.js";
import type { Runtime } from "./loop.js";
import { measureConcurrency, type ConcurrencyPlan } from "./measure/concurrency.js";
import { measureMemory } from "./measure/measure-memory.js";
import { measurePostgres, type PgPlan } from "./measure/measure-postgres.js";
import { measureSqlite, type SqliteWorkload } from "./measure/measure-sqlite.js";
import { measureTracing } from "./measure/measure-tracing.js";
import { renderTracing } from "./report/render-tracing.js";
import { measurePeakRss } from "./measure/peak-rss.js";
import type { StorePlan } from "./measure/plan.js";
import { memorySection, renderReport } from "./report/render-report.js";
import { renderPostgres } from "./report/render-postgres.js";
import { renderSqlite } from "./report/render-sqlite.js";
import type { PgStore, PgWorkload } from "./tenxgraph/pg-stores.js";
import { packageVersions } from "./versions.js";
import { measureWorkers } from "./workers/measure-workers.js";
import { workersPlan } from "./workers/workers-plan.js";
import type { Workload } from "./workload.js";

/**
 * `npm run bench [-- --quick]`: tenxgraph beside LangGraph.js on the same ReAct loop (a scripted
 * model asking for 1 or 4 trivial tools per turn for 5, 50 and 200 turns), on the in-memory
 * stores (beside the loop with no runtime; tenxgraph also with an OpenTelemetry SDK tracer), on SQLite (beside one raw synchronous=FULL commit
 * per step) and on PostgreSQL, tenxgraph alone and with Redis (beside one raw autocommit INSERT
 * per step on the same server); then 1 thread against 8 and each runtime's peak RSS in a
 * process of its own; then the HTTP API (`@tenxgraph/client` against `@tenxgraph/server` on
 * 127.0.0.1) beside in-process calls on the same one-step graph; then background runs across
 * worker processes (takeover after SIGKILL, queue latency, runs per second with 1 and 4 workers). Medians over interleaved rounds after warm-ups; no assertions, figures
 * only. Writes bench/results.md and bench/results.json (`--quick`: every runtime and store once,
 * to bench/results-quick.*, which git ignores). PostgreSQL and Redis are started here unless
 * TENXGRAPH_BENCH_POSTGRES_DSN / TENXGRAPH_BENCH_REDIS_URL name servers to use.
 * `--only <part>` measures one part alone (see `onlyParts`) and prints its section, writing nothing.
 */
const quick = process.argv.includes("--quick");
const onlyAt = process.argv.indexOf("--only");
const only = onlyAt === -1 ? undefined : process.argv[onlyAt + 1];
const runtimes: Runtime[] = ["tenxgraph", "langgraph"];

/** Each shape at 5, 50 and 200 turns with 1 and 4 tools per turn (quick: two small ones). */
const shapes: Workload[] = quick
  ? [
      { turns: 5, toolsPerTurn: 1 },
      { turns: 5, toolsPerTurn: 4 },
    ]
  : [5, 50, 200].flatMap((turns) => [1, 4].map((toolsPerTurn) => ({ turns, toolsPerTurn })));

// LangGraph.js rewrites its whole message list each step: at 200 turns it sits out most rounds.
const langgraphLong = {
  longTurns: 200,
  longWarmupRounds: 1,
  longRounds: 4,
  longAccountSteps: 400,
};
const memoryPlan: StorePlan = {
  // Memory runs are quick, and V8 optimises a hot loop only after many calls: a short warm-up
  // times the compiler, not the steady state a server runs in. Each workload warms its own
  // process (see openIsolatedLoop), and 10 rounds (10 runs at 50 turns) left tenxgraph at 2.4x
  // its steady time there; 40 rounds (about 4,000 steps) reach it at every length.
  warmupRounds: quick ? 1 : 40,
  rounds: quick ? 2 : 15,
  stepsPerRound: 100,
  accountSteps: 0,
  langgraphLong: { ...langgraphLong, longRounds: 5 },
};
const sqlitePlan: StorePlan = {
  warmupRounds: quick ? 1 : 2,
  rounds: quick ? 2 : 15,
  stepsPerRound: 100,
  // Enough steps that whole pages fill up, so bytes per step is not a page's rounding.
  accountSteps: quick ? 100 : 400,
  langgraphLong,
};
const sqliteWorkloads: SqliteWorkload[] = [
  ...shapes.map((shape): SqliteWorkload => ({ ...shape, synchronous: "FULL" })),
  // SqliteSaver runs at synchronous=NORMAL (see the report): tenxgraph at NORMAL is like for like.
  ...(quick ? [] : [1, 4]).map((toolsPerTurn): SqliteWorkload => ({
    turns: 50,
    toolsPerTurn,
    synchronous: "NORMAL",
  })),
];

const concurrencyPlan: ConcurrencyPlan = {
  warmupRounds: quick ? 0 : 1,
  rounds: quick ? 1 : 5,
  threads: 8,
  runsPerThread: 1,
  rawCommitsPerConnection: quick ? 50 : 200,
};
const pgStores: PgStore[] = ["postgres", "postgres+redis"];
const pgPlan: PgPlan = {
  warmupRounds: quick ? 1 : 2,
  rounds: quick ? 2 : 10,
  stepsPerRound: 100,
  // 8 KiB pages: enough steps that their rounding is a few bytes per step.
  accountSteps: quick ? 100 : 1200,
  langgraphLong,
  concurrency: concurrencyPlan,
};
const pgWorkloads: PgWorkload[] = pgStores.flatMap((store) =>
  shapes.map((shape) => ({ ...shape, store })),
);
const threadShape: Workload = { turns: quick ? 5 : 50, toolsPerTurn: 4 };
const pgConcurrencyWorkloads: PgWorkload[] = pgStores.flatMap((store) =>
  (quick ? [4] : [1, 4]).map((toolsPerTurn) => ({ ...threadShape, toolsPerTurn, store })),
);
const rssShape: Workload = { turns: quick ? 5 : 50, toolsPerTurn: 4 };
const rssRuns = quick ? 1 : 3;
const http = httpPlan(quick);
const workers = workersPlan(quick);

/** The parts `--only` can measure alone, each printing its section of results.md. */
const onlyParts: Record<string, () => Promise<string[]>> = {
  memory: async () => memorySection(await measureMemory(shapes, runtimes, memoryPlan)),
  sqlite: async () => renderSqlite(await measureSqlite(sqliteWorkloads, runtimes, sqlitePlan)),
  tracing: async () => renderTracing(await measureTracing(shapes, memoryPlan)),
  postgres: async () =>
    renderPostgres(
      await measurePostgres(pgWorkloads, pgConcurrencyWorkloads, pgPlan, { rssShape, rssRuns }),
    ),
};

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

if (only !== undefined) {
  const part = onlyParts[only];
  if (!part) throw new Error(`--only takes one of: ${Object.keys(onlyParts).join(", ")}`);
  console.log((await timed(only, part)).join("\n"));
  process.exit(0);
}

// Other work on a shared machine moves every figure; the load says how busy it was.
const loadAtStart = os.loadavg()[0]!;
const scratch = mkdtempSync(join(os.tmpdir(), "tenxgraph-bench-threads-"));
try {
  const memory = await timed("memory", () => measureMemory(shapes, runtimes, memoryPlan));
  const tracing = await timed("tracing", () => measureTracing(shapes, memoryPlan));
  const sqlite = await timed("sqlite", () => measureSqlite(sqliteWorkloads, runtimes, sqlitePlan));
  const postgres = await timed("postgres", () =>
    measurePostgres(pgWorkloads, pgConcurrencyWorkloads, pgPlan, { rssShape, rssRuns }),
  );
  const concurrency = await timed("threads", () =>
    measureConcurrency(
      [
        { store: "memory", spec: () => ({ kind: "memory" }) as const, poolMax: null },
        {
          store: "sqlite",
          spec: (runtime: Runtime) =>
            ({
              kind: "sqlite",
              path: join(scratch, `${runtime}.db`),
              synchronous: "FULL",
            }) as const,
          poolMax: null,
        },
      ].map((one) => ({ ...one, workload: threadShape, runtimes })),
      concurrencyPlan,
    ),
  );
  const peakRss = await timed("rss", async () => [
    await measurePeakRss("memory", rssShape, rssRuns, runtimes, () => ({})),
    await measurePeakRss("sqlite", rssShape, rssRuns, runtimes, (runtime, use) => ({
      path: join(scratch, `rss-${runtime}-${use}.db`),
    })),
  ]);

  const httpResults = await timed("http", () => measureHttp(http));
  const workersResults = await timed("workers", () => measureWorkers(workers));

  const results = {
    machine: machine(),
    versions: {
      ...packageVersions(),
      postgresql: postgres.server.version,
      redis: postgres.redis.version,
    },
    load: { atStart: loadAtStart, atEnd: os.loadavg()[0]! },
    seconds,
    quick,
    plans: { memory: memoryPlan, sqlite: sqlitePlan, postgres: pgPlan, rssRuns, http },
    memory,
    tracing,
    sqlite,
    postgres,
    concurrency: [...concurrency, ...postgres.concurrency],
    peakRss: [...peakRss, ...postgres.peakRss],
    http: httpResults,
    workers: workersResults,
  };
  const report = renderReport(results);
  const out = new URL("../", import.meta.url);
  // A quick run is a smoke check; it must not replace the committed figures.
  const name = quick ? "results-quick" : "results";
  writeFileSync(new URL(`${name}.md`, out), report);
  writeFileSync(new URL(`${name}.json`, out), JSON.stringify(results, null, 2) + "\n");
  console.log(report);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

function machine(): string {
  const memory = `${Math.round(os.totalmem() / 2 ** 30)} GiB`;
  const cpus = os.cpus();
  return `${cpus[0]?.model ?? "cpu"} x${cpus.length}, ${memory}, ${os.type()} ${os.release()}`;
}
