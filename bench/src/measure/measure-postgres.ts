import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { redisCommand } from "../../../tests/support/services/redis-server.js";
import { runSql, startBenchServers } from "../servers/bench-servers.js";
import { measureConcurrency, type ConcurrencyPlan, type ConcurrencyRow } from "./concurrency.js";
import { PgObserver, type PgServerFacts } from "../accounting/pg-observer.js";
import { WarningLog, type PgWorkload } from "../tenxgraph/pg-stores.js";
import { PgWorkloadBench, type PgBenchContext, type PgRow } from "./pg-workload-bench.js";

/** Rounds to run (the first `warmupRounds` unmeasured) and about how many steps per round. */
export interface PgPlan {
  warmupRounds: number;
  rounds: number;
  stepsPerRound: number;
  /** Steps of the untimed pass that counts round trips, commits and bytes, at least. */
  accountSteps: number;
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
  /** What the stores logged at warn or error level; empty in a clean run. */
  warnings: string[];
}

/**
 * Measures every workload on PgCheckpointer (PostgreSQL alone, and with Redis) against raw
 * commits on the same server, then the throughput of one thread against many. The workloads
 * take turns, a round at a time, so a busy spell of the shared machine falls on all rows alike.
 */
export async function measurePostgres(
  workloads: PgWorkload[],
  concurrencyWorkloads: PgWorkload[],
  plan: PgPlan,
): Promise<PostgresResults> {
  const servers = await startBenchServers();
  try {
    const observer = await PgObserver.open(servers.postgresDsn);
    const context: PgBenchContext = {
      servers,
      observer,
      schemaPrefix: `bench_${randomBytes(3).toString("hex")}`,
      accountSteps: plan.accountSteps,
      warnings: new WarningLog(),
    };
    try {
      const rows = await measureWorkloads(workloads, plan, context);
      // Gone before the threads are timed, so autovacuum has nothing of theirs left to do.
      await dropSchemas(servers.postgresDsn, context.schemaPrefix);
      const concurrency = await measureConcurrency(concurrencyWorkloads, plan.concurrency, context);
      return {
        server: { ...(await observer.facts()), startedByBench: servers.ownPostgres !== undefined },
        redis: { version: await redisVersion(servers.redisUrl), startedByBench: servers.ownRedis },
        drivers: { pg: packageVersion("pg"), ioredis: packageVersion("ioredis") },
        plan,
        rows,
        concurrency,
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

async function measureWorkloads(
  workloads: PgWorkload[],
  plan: PgPlan,
  context: PgBenchContext,
): Promise<PgRow[]> {
  const benches: PgWorkloadBench[] = [];
  try {
    for (const workload of workloads) benches.push(await PgWorkloadBench.open(workload, context));
    for (let round = 0; round < plan.warmupRounds + plan.rounds; round++) {
      for (const bench of benches) {
        const runs = Math.max(1, Math.round(plan.stepsPerRound / bench.stepsPerRun));
        await bench.round(runs, round >= plan.warmupRounds);
      }
    }
    return benches.map((bench) => bench.result());
  } finally {
    for (const bench of benches) await bench.close();
  }
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
