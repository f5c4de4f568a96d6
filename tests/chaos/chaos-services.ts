import { setTimeout as sleep } from "node:timers/promises";
import type { StoreServers } from "../support/fresh-store.js";
import { redisCommand, startServers } from "@tenxgraph/test-servers";
import type { PostgresServer, RedisServer } from "@tenxgraph/test-servers";

/** One disruption of a server, for the report and for judging runs that failed during it. */
export interface ServiceEvent {
  what: "postgres-restart" | "postgres-crash-restart" | "redis-freeze";
  /** Kills reached when it began. */
  atKill: number;
  startedAt: number;
  /** Infinity while it lasts. */
  endedAt: number;
}

/** After a PostgreSQL restart, runs that were retrying through it may still fail this long. */
const RETRY_TAIL_MS = 10_000;

/**
 * The chaos run's own PostgreSQL and Redis (never the test suite's shared ones: they are
 * restarted and frozen here), with the disruptions it puts them through. Checks read the store
 * through `stable`, which waits out a PostgreSQL restart, and a restart waits for the checks in
 * progress: an observer that cannot read is no finding.
 */
export class ChaosServices {
  readonly events: ServiceEvent[] = [];
  readonly #postgres: PostgresServer;
  readonly #redis: RedisServer;
  #restarting: Promise<void> | null = null;
  #reading = 0;
  #readersGone: (() => void) | null = null;

  private constructor(postgres: PostgresServer, redis: RedisServer) {
    this.#postgres = postgres;
    this.#redis = redis;
  }

  static async start(): Promise<ChaosServices> {
    const { postgres, redis } = await startServers({ name: "chaos" });
    return new ChaosServices(postgres!, redis!);
  }

  get servers(): StoreServers {
    return { postgresDsn: this.#postgres.dsn, redisUrl: this.#redis.url };
  }

  /** Runs `read` once PostgreSQL is up; a restart waits for it to end. */
  async stable<T>(read: () => Promise<T>): Promise<T> {
    while (this.#restarting) await this.#restarting;
    this.#reading += 1;
    try {
      return await read();
    } finally {
      this.#reading -= 1;
      if (this.#reading === 0) this.#readersGone?.();
    }
  }

  /**
   * Stops PostgreSQL (a fast shutdown, or a SIGKILL of every server process when `crash`) while
   * workers use it, waits `downMs`, and starts it again on the same port and data.
   */
  async restartPostgres(atKill: number, downMs: number, crash: boolean): Promise<void> {
    const what = crash ? "postgres-crash-restart" : "postgres-restart";
    const event: ServiceEvent = { what, atKill, startedAt: Date.now(), endedAt: Infinity };
    this.events.push(event);
    let done!: () => void;
    this.#restarting = new Promise((resolve) => (done = resolve));
    try {
      if (this.#reading > 0) await new Promise<void>((r) => (this.#readersGone = r));
      this.#readersGone = null;
      await (crash ? this.#postgres.kill() : this.#postgres.stop());
      await sleep(downMs);
      await this.#postgres.start();
    } finally {
      event.endedAt = Date.now();
      this.#restarting = null;
      done();
    }
  }

  /** SIGSTOPs the Redis server for `forMs`: connections stay open, nothing answers. */
  async freezeRedis(atKill: number, forMs: number): Promise<void> {
    const info = await redisCommand(this.#redis.url, ["INFO", "server"]);
    const pid = Number(/process_id:(\d+)/.exec(info)![1]);
    const event: ServiceEvent = { what: "redis-freeze", atKill, startedAt: Date.now(), endedAt: 0 };
    process.kill(pid, "SIGSTOP");
    try {
      await sleep(forMs);
    } finally {
      process.kill(pid, "SIGCONT");
      event.endedAt = Date.now();
      this.events.push(event);
    }
  }

  /**
   * Whether a run between `from` and `to` may have failed because PostgreSQL was down: its
   * interval meets a restart, or the retries that followed it.
   */
  postgresDownDuring(from: number, to: number): boolean {
    return this.events.some(
      (e) => e.what !== "redis-freeze" && from <= e.endedAt + RETRY_TAIL_MS && to >= e.startedAt,
    );
  }

  async destroy(): Promise<void> {
    await Promise.all([this.#postgres.destroy(), this.#redis.destroy()]);
  }
}
