/**
 * The Redis keys of a store name the store itself, not its DSN: two stores sharing one Redis
 * never read each other's threads, even when their DSNs name the same database and schema on
 * two servers. By default the name is a random store id made once, at setup, and kept in the
 * schema; `cacheKeyPrefix` sets it explicitly.
 */
import { silentLogger } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import type { PgCheckpointerOptions } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresServer, redisCommand } from "@tenxgraph/test-servers";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema } from "../support/pg-store.js";
import { twoVersions } from "../support/owned-write.js";
import { sql } from "../support/pg-inspect.js";

const dsn = testPostgresDsn();
const redisUrl = testRedisUrl();
const schema = freshSchema("cache_key_prefix");
const opened: PgCheckpointer[] = [];
let other: PostgresServer;

beforeAll(async () => {
  other = await PostgresServer.start({ name: "second-store" });
});

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  await other?.destroy();
  await dropSchema(dsn, schema);
});

/** A worker on `schema` of the server at `postgresDsn`, with the suite's shared Redis. */
function worker(postgresDsn: string, options: Partial<PgCheckpointerOptions> = {}) {
  const store = new PgCheckpointer({
    postgresDsn,
    redisUrl,
    schema,
    logger: silentLogger,
    ...options,
  });
  opened.push(store);
  return store;
}

async function inRedis(key: string): Promise<boolean> {
  return (await redisCommand(redisUrl, ["EXISTS", key])) === "1";
}

describe("stores sharing one Redis", () => {
  it("two servers, the same database and schema names: neither reads the other's thread", async () => {
    const threadId = "same-id";
    expect(new URL(other.dsn).pathname, "both DSNs name the same database").toBe(
      new URL(dsn).pathname,
    );
    const first = worker(dsn);
    await twoVersions(first, threadId, "alice");
    // close() waits for the cache refreshes still on their way: alice's copy is in Redis.
    await first.close();

    const second = worker(other.dsn);
    await twoVersions(second, threadId, "bob");
    expect(await second.getCheckpoint(threadId)).toMatchObject({ version: 2, userId: "bob" });
    await second.close();
    expect(await worker(dsn).getCheckpoint(threadId)).toMatchObject({
      version: 2,
      userId: "alice",
    });
  });
});

describe("the store id", () => {
  it("is made once, kept in the schema, and names the keys of every worker on the store", async () => {
    const workers = [worker(dsn), worker(dsn)];
    await Promise.all(workers.map((store) => store.setup()));
    const rows = await sql<{ store_id: string }>(
      dsn,
      `SELECT store_id FROM ${pg.escapeIdentifier(schema)}.tenxgraph_store`,
    );
    expect(rows).toHaveLength(1);
    const storeId = rows[0]!.store_id;
    expect(storeId).toMatch(/^[0-9a-f-]{36}$/);

    await twoVersions(workers[0]!, "store-id", "alice");
    await workers[0]!.close();
    expect(await inRedis(`tenxgraph:${storeId}:thread:store-id`)).toBe(true);
    expect(await workers[1]!.getCheckpoint("store-id")).toMatchObject({ userId: "alice" });
  });
});

describe("the store id's row deleted by hand", () => {
  it("the next setup makes a new id, so the store's old keys are simply no longer used", async () => {
    const table = `${pg.escapeIdentifier(schema)}.tenxgraph_store`;
    const [before] = await sql<{ store_id: string }>(dsn, `SELECT store_id FROM ${table}`);
    await sql(dsn, `DELETE FROM ${table}`);

    const store = worker(dsn);
    await twoVersions(store, "new-id", "dave");
    await store.close();
    const after = await sql<{ store_id: string }>(dsn, `SELECT store_id FROM ${table}`);
    expect(after).toHaveLength(1);
    expect(after[0]!.store_id).not.toBe(before!.store_id);
    expect(await inRedis(`tenxgraph:${after[0]!.store_id}:thread:new-id`)).toBe(true);
  });
});

describe("cacheKeyPrefix", () => {
  it("names the keys instead of the store id", async () => {
    const prefix = `${schema}-explicit:`;
    const store = worker(other.dsn, { cacheKeyPrefix: prefix });
    await twoVersions(store, "explicit", "carol");
    await store.close();
    expect(await inRedis(`${prefix}thread:explicit`)).toBe(true);
    expect(
      await worker(other.dsn, { cacheKeyPrefix: prefix }).getCheckpoint("explicit"),
    ).toMatchObject({ version: 2, userId: "carol" });
  });
});
