import pg from "pg";
import { Redis } from "ioredis";

/** The requests a body sent to PostgreSQL and Redis, in total and by statement or command. */
export interface RoundTrips<T> {
  result: T;
  postgres: number;
  /** Queries per statement, keyed by the statement's first words. */
  postgresBySql: Record<string, number>;
  redis: number;
  redisByCommand: Record<string, number>;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Runs `body` while counting every query sent through `pg` (each `Client.query`: one statement
 * and one round trip, since the store sends no multi-statement strings) and every command sent
 * through ioredis (`Redis.sendCommand`: EVALSHA of a script is one). PgCheckpointer has no hook
 * of its own, so the count wraps the drivers' prototypes, which every connection in this
 * process shares; they are restored when the body settles. Nothing else may query meanwhile.
 */
export async function countRoundTrips<T>(body: () => Promise<T>): Promise<RoundTrips<T>> {
  const postgresBySql: Record<string, number> = {};
  const redisByCommand: Record<string, number> = {};
  const restore = [
    wrap(pg.Client.prototype, "query", (args) =>
      count(postgresBySql, shorten(unqualified(sqlOf(args[0])))),
    ),
    wrap(Redis.prototype, "sendCommand", (args) => count(redisByCommand, commandName(args[0]))),
  ];
  try {
    const result = await body();
    return {
      result,
      postgres: sum(postgresBySql),
      postgresBySql,
      redis: sum(redisByCommand),
      redisByCommand,
    };
  } finally {
    for (const undo of restore) undo();
  }
}

/** Calls `observe` with the arguments of every call of `target[name]`; returns the undo. */
function wrap(target: object, name: string, observe: (args: unknown[]) => void): () => void {
  const methods = target as Record<string, Method>;
  const original = methods[name]!;
  methods[name] = function (this: unknown, ...args: unknown[]) {
    observe(args);
    return original.apply(this, args);
  };
  return () => {
    methods[name] = original;
  };
}

function count(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((total, n) => total + n, 0);
}

/** The text of a `Client.query` call: a string, or a config object with `text`. */
function sqlOf(config: unknown): string {
  if (typeof config === "string") return config;
  return String((config as { text?: unknown } | undefined)?.text ?? "?");
}

/**
 * The statement without quoted schema qualifiers (`"bench_..._account".checkpoints`), so that
 * every workload's schema reads alike and the first words are the statement's own.
 */
function unqualified(sql: string): string {
  return sql.replace(/"[^"]*"\./g, "");
}

function commandName(command: unknown): string {
  return String((command as { name?: unknown } | undefined)?.name ?? "?");
}

/** A statement's first words, whitespace collapsed: enough to tell the store's apart. */
export function shorten(sql: string): string {
  return sql.replace(/\s+/g, " ").trim().slice(0, 60);
}
