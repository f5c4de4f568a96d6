import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { redisCommand } from "@tenxgraph/test-servers";
import { runSql, startBenchServers } from "../servers/bench-servers.js";
import { PgObserver, type PgServerFacts } from "../accounting/pg-observer.js";
import { PgRawCommit } from "../floor/pg-raw-commit.js";
import type { Runtime } from "../loop.js";
import type { Workload } from "../workload.js";
import { pgLabel, type PgWorkload } from "../tenxgraph/pg-stores.js";
import { WarningLog } from "../tenxgraph/warning-log.js";
import { measureConcurrency, type ConcurrencyPlan, type ConcurrencyRow } from "./concurrency.js";
import { measurePeakRss, type PeakRssRow } from "./peak-rss.js";
import type { StorePlan } from "./plan.js";
import {
  openPgWorkloadBench,
  pgRow,
  pgSpec,
  type PgBenchContext,
  type PgRow,
} from "./pg-workload-bench.js";
import { measureWorkloads } from "./store-workload-bench.js";

/** Both pools' default size (PgCheckpointer's and pg.Pool's, which PostgresSaver opens). */
const DEFAULT_POOL_MAX = 10;

/** The PostgreSQL part's plan: the side-by-side rounds and the throughput comparison. */
export interface PgPlan extends StorePlan {
  concurrency: ConcurrencyPlan;
}

/** Everything the PostgreSQL part of the bench found, as written to results.json. */
export interface PostgresResults {
  server: PgServerFacts & { startedByBench: boolean };
  redis: { version: string; startedByBench: boolean };
  drivers: { pg: string; ioredis: string };
  plan: PgPlan;
  rows: PgRow[];
  concurrency: ConcurrencyRow[];
  peakRss: PeakRssRow[];
  /** What the stores logged at warn or error level; empty in a clean run. */
  warnings: string[];
}

/**
 * Measures every workload on PostgreSQL (tenxgraph's PgCheckpointer alone and with Redis;
 * LangGraph's PostgresSaver beside the first) against raw commits on the same server, then
 * the throughput of one thread against many. The workloads take turns, a round at a time, so a
 * busy spell of the shared machine falls on all rows alike.
 */
export async function measurePostgres(
  workloads: PgWorkload[],
  concurrencyWorkloads: PgWorkload[],
  plan: PgPlan,
  rss: { rssShape: Workload; rssRuns: number },
): Promise<PostgresResults> {
  const servers = await startBenchServers();
  try {
    const observer = await PgObserver.open(servers.postgresDsn);
    const context: PgBenchContext = {
      servers,
      observer,
      schemaPrefix: `bench_${randomBytes(3).toString("hex")}`,
      warnings: new WarningLog(),
    };
    try {
      const rows = await measureWorkloads(
        workloads,
        plan,
        (workload) => openPgWorkloadBench(workload, runtimesOn(workload), context, plan),
        pgRow,
      );
      // Gone before the threads are timed, so autovacuum has nothing of theirs left to do.
      await dropSchemas(servers.postgresDsn, context.schemaPrefix);
      const concurrency = await measureConcurrency(
        concurrencyWorkloads.map((w) => concurrencyCase(w, context, plan.concurrency.threads)),
        plan.concurrency,
      );
      const peakRss = await measurePeakRss(
        "postgres",
        rss.rssShape,
        rss.rssRuns,
        ["tenxgraph", "langgraph"],
        (runtime, use) => ({
          postgresDsn: servers.postgresDsn,
          schema: `${context.schemaPrefix}_rss_${runtime}_${use}`,
        }),
      );
      return {
        server: { ...(await observer.facts()), startedByBench: servers.ownPostgres !== undefined },
        redis: { version: await redisVersion(servers.redisUrl), startedByBench: servers.ownRedis },
        drivers: { pg: packageVersion("pg"), ioredis: packageVersion("ioredis") },
        plan,
        rows,
        concurrency,
        peakRss: [peakRss],
        warnings: context.warnings.messages,
      };
    } finally {
      await observer.close();
      // A server started here is deleted whole; a given one only loses what this run made.
      if (!servers.ownPostgres) await dropSchemas(servers.postgresDsn, context.schemaPrefix);
    }
  } finally {
    await servers.destroy();
  }
}

/** LangGraph.js has a PostgreSQL saver but none with Redis: it runs on PostgreSQL alone. */
function runtimesOn(workload: PgWorkload): Runtime[] {
  return workload.store === "postgres" ? ["tenxgraph", "langgraph"] : ["tenxgraph"];
}

function concurrencyCase(workload: PgWorkload, context: PgBenchContext, threads: number) {
  return {
    store: workload.store,
    workload: { turns: workload.turns, toolsPerTurn: workload.toolsPerTurn },
    runtimes: runtimesOn(workload),
    spec: (runtime: Runtime) => pgSpec(context, workload, runtime, "threads"),
    openFloor: () =>
      PgRawCommit.open(context.servers.postgresDsn, {
        schema: `${context.schemaPrefix}_${pgLabel(workload)}_threads_raw`,
        rowBytes: 600,
        connections: threads,
      }),
    servers: context.servers,
    poolMax: DEFAULT_POOL_MAX,
  };
}

/** Drops the schemas this run made so far. */
async function dropSchemas(dsn: string, prefix: string): Promise<void> {
  await runSql(dsn, [
    `DO $$ DECLARE s text; BEGIN
       FOR s IN SELECT nspname FROM pg_namespace WHERE starts_with(nspname, '${prefix}_') LOOP
         EXECUTE format('DROP SCHEMA %I CASCADE', s);
       END LOOP;
     END $$`,
  ]);
}

async function redisVersion(url: string): Promise<string> {
  const info = await redisCommand(url, ["INFO", "server"]);
  return /redis_version:(\S+)/.exec(info)?.[1] ?? "?";
}

function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  return (require(`${name}/package.json`) as { version: string }).version;
}
