import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@tenxgraph/core";
import pg from "pg";
import { isConnectionError, isRolledBack, mapPgError } from "./pg-errors.js";

/** How a {@link Database} connects and retries. */
export interface DatabaseSettings {
  dsn: string;
  schema: string;
  /** The DSN without its password, for messages. */
  location: string;
  pool: { max: number; idleTimeoutMs: number; connectionTimeoutMs: number };
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  retry: { attempts: number; firstDelayMs: number };
  /** Send statements by name, prepared once per connection. */
  preparedStatements: boolean;
  logger: Logger;
}

/**
 * Whether a statement may be sent again after its connection broke mid-flight.
 * - `"repeatable"`: reads, and writes whose second run changes nothing (retried on any
 *   connection error).
 * - `"once"`: writes that could be applied twice (retried only when the server certainly did
 *   not apply them: no connection could be made, or it rolled the transaction back).
 */
export type RetryPolicy = "repeatable" | "once";

/**
 * The PostgreSQL side of the checkpointer: a `pg` pool whose sessions use the store's schema and
 * timeouts, and one place that decides what is retried after a failure.
 */
export class Database {
  readonly #pool: pg.Pool;
  readonly #settings: DatabaseSettings;

  constructor(settings: DatabaseSettings) {
    this.#settings = settings;
    this.#pool = new pg.Pool({
      connectionString: settings.dsn,
      max: settings.pool.max,
      idleTimeoutMillis: settings.pool.idleTimeoutMs,
      connectionTimeoutMillis: settings.pool.connectionTimeoutMs,
      statement_timeout: settings.statementTimeoutMs,
      // The server enforces statement_timeout only while it runs: a frozen server or a network
      // partition answers nothing, so the client gives up a second later on its own.
      query_timeout: settings.statementTimeoutMs + 1000,
      lock_timeout: settings.lockTimeoutMs,
      // A session that dies mid-transaction must not hold the thread's row lock for long.
      idle_in_transaction_session_timeout: Math.max(settings.statementTimeoutMs, 10_000),
      application_name: "tenxgraph",
      options: `-c search_path=${quoteIdentifier(settings.schema)}`,
    });
    // An idle client whose server went away (a restart) reports here; without a listener the
    // process would crash. The pool drops that client and the next checkout connects anew.
    this.#pool.on("error", (error) => {
      settings.logger.warn({ err: error }, "An idle PostgreSQL connection broke; it was dropped");
    });
    // A connection that breaks while checked out emits 'error' on its client, which crashes the
    // process when no listener is attached at that instant; the pool detaches its own listener at
    // checkout. One listener for the client's whole life leaves no such instant (a chaos run
    // lost a worker to a server shutdown, 57P01, without it). The failure itself still reaches
    // the pending query, and #once destroys the client instead of returning it.
    this.#pool.on("connect", (client) => {
      client.on("error", (error) => {
        settings.logger.debug({ err: error }, "A PostgreSQL connection broke");
      });
    });
  }

  get location(): string {
    return this.#settings.location;
  }

  /**
   * Runs one statement under `policy`, translating failures into tenxgraph errors. `values` may
   * depend on the try (1 for the first), for statements that must recognise their own earlier
   * try.
   */
  async query<Row extends pg.QueryResultRow>(
    operation: string,
    policy: RetryPolicy,
    text: string,
    values?: unknown[] | ((tryNumber: number) => unknown[]),
  ): Promise<Row[]> {
    return this.withClient(operation, policy, async (client, tryNumber) => {
      const params = typeof values === "function" ? values(tryNumber) : values;
      const name = this.#settings.preparedStatements ? statementName(text) : undefined;
      const result = await client.query<Row>({ name, text, values: params });
      return result.rows;
    });
  }

  /** Runs `body` on one checked-out connection under `policy`; `tryNumber` is 1 the first time. */
  async withClient<T>(
    operation: string,
    policy: RetryPolicy,
    body: (client: pg.PoolClient, tryNumber: number) => Promise<T>,
  ): Promise<T> {
    const { attempts, firstDelayMs } = this.#settings.retry;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once((client) => body(client, attempt));
      } catch (failure) {
        const { error, sent } = failure as Failure;
        const retryable =
          isRolledBack(error) || (isConnectionError(error) && (policy === "repeatable" || !sent));
        if (!retryable || attempt >= attempts) {
          throw mapPgError(operation, this.#settings.location, explain(error, policy, sent));
        }
        this.#settings.logger.warn(
          { err: error, operation, attempt },
          "PostgreSQL call failed; retrying",
        );
        await sleep(firstDelayMs * 2 ** (attempt - 1));
      }
    }
  }

  /**
   * Runs `body` in one transaction on one connection, under `policy`: COMMIT when it returns,
   * ROLLBACK when it throws, so the connection goes back to the pool outside any transaction.
   */
  async transaction<T>(
    operation: string,
    policy: RetryPolicy,
    body: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    return this.withClient(operation, policy, async (client) => {
      await client.query("BEGIN");
      try {
        const result = await body(client);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    });
  }

  async end(): Promise<void> {
    await this.#pool.end();
  }

  /** One try; a failure says whether anything reached the server. */
  async #once<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw { error, sent: false } satisfies Failure;
    }
    try {
      const result = await body(client);
      client.release();
      return result;
    } catch (error) {
      // A broken connection is destroyed rather than returned to the pool.
      client.release(isConnectionError(error) ? (error as Error) : undefined);
      throw { error, sent: true } satisfies Failure;
    }
  }
}

interface Failure {
  error: unknown;
  /** Whether a statement may have reached the server. */
  sent: boolean;
}

/** A write cut off mid-flight says so: the caller must know it may have been applied. */
function explain(error: unknown, policy: RetryPolicy, sent: boolean): unknown {
  if (policy === "repeatable" || !sent || !isConnectionError(error)) return error;
  const why =
    `the connection broke while the write was in flight, so it may or may not have been ` +
    `applied; it was not repeated (${error instanceof Error ? error.message : String(error)})`;
  return Object.assign(new Error(why, { cause: error }), {
    code: (error as { code?: unknown }).code,
  });
}

const statementNames = new Map<string, string>();

/**
 * The name the statement is prepared under, the same for the same text: each connection parses
 * and plans it once and then only binds values, which spares the server a parse and a plan per
 * call on the hot path.
 */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `tenxgraph_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** `name` as a PostgreSQL identifier. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
