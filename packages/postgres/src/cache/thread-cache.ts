import { METER_NAME, type Logger } from "@tenxgraph/core";
import type { CheckpointWrite, ThreadCheckpoint } from "@tenxgraph/core/storage";
import { metrics, type Counter } from "@opentelemetry/api";
import { Redis } from "ioredis";
import { PUT_CHECKPOINT, PUT_STEP } from "./cache-scripts.js";

export interface ThreadCacheSettings {
  url: string;
  keyPrefix: string;
  ttlSeconds: number;
  logger: Logger;
}

/**
 * What the cache holds for a thread, with the thread's incarnation (`threads.incarnation`): a
 * copy counts only when PostgreSQL holds the same incarnation, so a deleted thread's copy never
 * passes for a new thread of the same id.
 */
export interface CachedCopy<T> {
  incarnation: number;
  value: T;
}

type CacheClient = Redis & {
  putCheckpoint(
    key: string,
    version: number,
    incarnation: number,
    json: string,
    ttl: number,
  ): Promise<number>;
  putStep(key: string, base: number, step: number, json: string, ttl: number): Promise<number>;
};

/**
 * The Redis hot copy of threads: one hash per thread with its incarnation, the latest durable
 * checkpoint (under a version guard) and, for runs with `durableCheckpointEveryStep: false`, the latest step not yet
 * written durably. Every failure is absorbed: the caller falls back to PostgreSQL, a warning is
 * logged once per outage and `tenxgraph.storage.cache_failures` is counted.
 */
export class ThreadCache {
  readonly #redis: CacheClient;
  readonly #settings: ThreadCacheSettings;
  readonly #failures: Counter;
  /** Threads whose cache entry may be stale because an update failed; cleared on reconnect. */
  readonly #suspect = new Set<string>();
  /** Writes started by {@link refresh} that have not settled; they never reject. */
  readonly #refreshing = new Set<Promise<void>>();
  #healthy = true;
  #closed = false;
  /**
   * Settles when the first connection is ready or has failed. Calls made before it wait for it:
   * a store just opened is not "in an outage", and failing them would warn and miss updates.
   */
  readonly #firstConnect: Promise<void>;

  constructor(settings: ThreadCacheSettings) {
    this.#settings = settings;
    this.#failures = metrics
      .getMeter(METER_NAME)
      .createCounter("tenxgraph.storage.cache_failures", {
        description: "Redis cache calls that failed and fell back to PostgreSQL",
      });
    const redis = new Redis(settings.url, {
      lazyConnect: true,
      // Fail at once while disconnected instead of queueing: the caller falls back to PostgreSQL.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 1000,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(100 * 2 ** times, 2000),
    });
    redis.defineCommand("putCheckpoint", { numberOfKeys: 1, lua: PUT_CHECKPOINT });
    redis.defineCommand("putStep", { numberOfKeys: 1, lua: PUT_STEP });
    redis.on("error", (error: Error) => this.#failed("connection", error));
    redis.on("ready", () => void this.#recovered());
    this.#redis = redis as CacheClient;
    this.#firstConnect = this.#redis.connect().catch((error: Error) => {
      this.#failed("connect", error);
    });
  }

  async getCheckpoint(threadId: string): Promise<CachedCopy<ThreadCheckpoint> | null> {
    return this.#read("getCheckpoint", threadId, "checkpoint");
  }

  /**
   * Starts storing `checkpoint` of the thread's `incarnation` and returns at once. PostgreSQL
   * already holds it, and a read uses a cached copy only once PostgreSQL confirms its version
   * and incarnation, so a run need not wait for Redis (that wait was about a sixth of a step),
   * and a write landing late, even after the thread was deleted, misleads no one. Commands on
   * the one connection are sent in call order, and `close()` waits for the writes still on
   * their way.
   */
  refresh(checkpoint: ThreadCheckpoint, incarnation: number): void {
    const write = this.#store(checkpoint, incarnation).finally(() =>
      this.#refreshing.delete(write),
    );
    this.#refreshing.add(write);
  }

  /**
   * Stores `checkpoint` unless the cache holds the same or a newer version of this incarnation,
   * or a newer incarnation.
   */
  async #store(checkpoint: ThreadCheckpoint, incarnation: number): Promise<void> {
    const { threadId, version } = checkpoint;
    const stored = await this.#try("putCheckpoint", () =>
      this.#redis.putCheckpoint(
        this.#key(threadId),
        version,
        incarnation,
        JSON.stringify(checkpoint),
        this.#settings.ttlSeconds,
      ),
    );
    if (stored === undefined) this.#suspect.add(threadId);
  }

  /**
   * `true` when the step was cached; `false` when Redis failed, the thread moved on, or the hash
   * does not hold the step's base version.
   */
  async putStep(write: CheckpointWrite): Promise<boolean> {
    const stored = await this.#try("cacheStep", () =>
      this.#redis.putStep(
        this.#key(write.threadId),
        write.expectedVersion,
        write.step,
        JSON.stringify(write),
        this.#settings.ttlSeconds,
      ),
    );
    return stored === 1;
  }

  /** The cached step, with the incarnation of the checkpoint it was made from. */
  async getStep(threadId: string): Promise<CachedCopy<CheckpointWrite> | null> {
    return this.#read("getCachedStep", threadId, "step");
  }

  /** Drops the thread's entry: after a conflict or a delete, PostgreSQL is read again. */
  async forget(threadId: string): Promise<void> {
    const deleted = await this.#try("forget", () => this.#redis.del(this.#key(threadId)));
    if (deleted === undefined) this.#suspect.add(threadId);
  }

  async close(): Promise<void> {
    await Promise.all(this.#refreshing);
    this.#closed = true;
    this.#redis.disconnect();
  }

  /** A JSON field of the thread's hash, read in one call with the incarnation it belongs to. */
  async #read<T>(
    operation: string,
    threadId: string,
    field: "checkpoint" | "step",
  ): Promise<CachedCopy<T> | null> {
    const [incarnation, json] =
      (await this.#try(operation, () =>
        this.#redis.hmget(this.#key(threadId), "incarnation", field),
      )) ?? [];
    if (!incarnation || !json) return null;
    return { incarnation: Number(incarnation), value: JSON.parse(json) as T };
  }

  #key(threadId: string): string {
    return `${this.#settings.keyPrefix}thread:${threadId}`;
  }

  /** Runs a Redis call; `undefined` when it failed (already logged and counted). */
  async #try<T>(operation: string, call: () => Promise<T>): Promise<T | undefined> {
    await this.#firstConnect;
    try {
      return await call();
    } catch (error) {
      this.#failed(operation, error as Error);
      return undefined;
    }
  }

  #failed(operation: string, error: Error): void {
    if (this.#closed) return; // closing ends the connection on purpose
    this.#failures.add(1, { operation });
    if (!this.#healthy) return;
    this.#healthy = false;
    this.#settings.logger.warn(
      { err: error, operation },
      "Redis cache unavailable; reading and writing PostgreSQL only until it is back",
    );
  }

  /** Back after an outage: entries that missed an update are dropped, so none is stale. */
  async #recovered(): Promise<void> {
    const suspect = [...this.#suspect];
    this.#suspect.clear();
    if (suspect.length > 0) {
      const deleted = await this.#try("recover", () =>
        this.#redis.del(...suspect.map((id) => this.#key(id))),
      );
      if (deleted === undefined) for (const id of suspect) this.#suspect.add(id);
    }
    if (!this.#healthy) this.#settings.logger.info({}, "Redis cache is back");
    this.#healthy = true;
  }
}
