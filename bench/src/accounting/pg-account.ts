import type { Loop } from "../loop.js";
import { countRoundTrips, shorten } from "./count-round-trips.js";
import type { PgObserver, ServerStatement, TableBytes } from "./pg-observer.js";

/** What a runtime's PostgreSQL store did for a workload, per node step, on a fresh schema. */
export interface PgAccount {
  /** Runs of the workload counted (short loops run several times, so the tables grow enough). */
  runs: number;
  steps: number;
  /** Queries sent to PostgreSQL (each one statement, one round trip), per step. */
  roundTripsPerStep: number;
  roundTripsPerStepBySql: Record<string, number>;
  /** Commands sent to Redis, per step (0 without Redis). */
  redisCommandsPerStep: number;
  redisCommandsPerStepByName: Record<string, number>;
  /** Writing transactions committed (commit records in the WAL), per step; null if unreadable. */
  commitsPerStep: number | null;
  /** WAL written per step (the flushed WAL position's advance, whole server). */
  walBytesPerStep: number;
  /** Growth of the tables with their indexes and TOAST (main forks), per step. */
  bytesPerStep: number;
  /** The same with free space and visibility maps (pg_total_relation_size), per step. */
  totalBytesPerStep: number;
  bytesPerStepByTable: Record<string, number>;
  /** pg_stat_statements' count of each statement, nested ones too; null if unreadable. */
  serverStatements: ServerStatementAccount[] | null;
}

/** One statement the server ran: executions per step and mean execution time. */
export interface ServerStatementAccount {
  sql: string;
  nested: boolean;
  perStep: number;
  meanMs: number;
}

/**
 * Runs `loop` (opened on the fresh schema `schema`) and counts, per step, the round trips, the
 * commits, the WAL and the bytes the tables grow by. Untimed. One run first goes uncounted: it
 * creates the tables of a store that makes them on first use, opens the pool and lets Redis
 * connect. Then `runs` runs are counted.
 */
export async function accountPgSchema(
  loop: Loop,
  observer: PgObserver,
  schema: string,
  runs: number,
): Promise<PgAccount> {
  await loop.run("account-warm-up");
  const before = await snapshot(observer, schema);
  await observer.resetStatementStats();
  const counted = await countRoundTrips(async () => {
    let steps = 0;
    for (let i = 0; i < runs; i++) steps += (await loop.run(`account-${i}`)).steps;
    return steps;
  });
  const statements = await observer.statementStats();
  const after = await snapshot(observer, schema);
  const steps = counted.result;
  const perStep = (n: number) => n / steps;
  const grown = difference(after.tables, before.tables);
  const commits = await observer.commitsBetween(before.wal, after.wal);
  return {
    runs,
    steps,
    roundTripsPerStep: perStep(counted.postgres),
    roundTripsPerStepBySql: perStepAll(counted.postgresBySql, steps),
    redisCommandsPerStep: perStep(counted.redis),
    redisCommandsPerStepByName: perStepAll(counted.redisByCommand, steps),
    commitsPerStep: commits === null ? null : perStep(commits),
    walBytesPerStep: perStep(await observer.walBytesBetween(before.wal, after.wal)),
    bytesPerStep: perStep(sumOf(grown, "main")),
    totalBytesPerStep: perStep(sumOf(grown, "total")),
    bytesPerStepByTable: perStepAll(grownTables(grown), steps),
    serverStatements: statements && accountStatements(statements, steps, schema),
  };
}

async function snapshot(observer: PgObserver, schema: string) {
  return { wal: await observer.walPosition(), tables: await observer.tableBytes(schema) };
}

/**
 * Statements merged by their first words, busiest first. The schema's name is taken out of the
 * foreign-key checks' text, so that every workload's checks read alike.
 */
function accountStatements(statements: ServerStatement[], steps: number, schema: string) {
  const merged = new Map<string, { nested: boolean; calls: number; totalMs: number }>();
  for (const { sql, nested, calls, totalMs } of statements) {
    const key = `${nested ? "nested" : "top"} ${shorten(sql.replaceAll(`"${schema}".`, ""))}`;
    const entry = merged.get(key) ?? { nested, calls: 0, totalMs: 0 };
    entry.calls += calls;
    entry.totalMs += totalMs;
    merged.set(key, entry);
  }
  return [...merged]
    .map(([key, { nested, calls, totalMs }]) => ({
      sql: key.slice(key.indexOf(" ") + 1),
      nested,
      perStep: calls / steps,
      meanMs: totalMs / calls,
    }))
    .sort((a, b) => b.perStep * b.meanMs - a.perStep * a.meanMs);
}

function difference(after: Record<string, TableBytes>, before: Record<string, TableBytes>) {
  return mapValues(after, (bytes, name) => ({
    main: bytes.main - (before[name]?.main ?? 0),
    total: bytes.total - (before[name]?.total ?? 0),
  }));
}

/** Main-fork growth of the tables that grew. */
function grownTables(grown: Record<string, TableBytes>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(grown)
      .filter(([, bytes]) => bytes.main !== 0)
      .map(([name, bytes]) => [name, bytes.main]),
  );
}

function sumOf(tables: Record<string, TableBytes>, fork: keyof TableBytes): number {
  return Object.values(tables).reduce((total, bytes) => total + bytes[fork], 0);
}

function perStepAll(counts: Record<string, number>, steps: number): Record<string, number> {
  return mapValues(counts, (n) => n / steps);
}

function mapValues<T, U>(
  record: Record<string, T>,
  map: (value: T, key: string) => U,
): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value, key)]));
}
