import { existsSync, readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresServer } from "./postgres-server.js";
import { RedisServer, pingRedis } from "./redis-server.js";
import { freshDatabase, testPostgresDsn, testRedisUrl } from "./test-services.js";

/** Runs `sql` on a fresh connection to `dsn` and returns the rows. */
async function query(dsn: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("the shared servers from global setup", () => {
  it("PostgreSQL accepts queries at the injected DSN", async () => {
    expect(await query(testPostgresDsn(), "SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  it("Redis answers PING at the injected URL", async () => {
    expect(await pingRedis(testRedisUrl())).toBe("PONG");
  });

  it("child processes find them in the environment", () => {
    expect(process.env.TENXGRAPH_TEST_POSTGRES_DSN).toBe(testPostgresDsn());
    expect(process.env.TENXGRAPH_TEST_REDIS_URL).toBe(testRedisUrl());
  });

  it("freshDatabase gives a new, empty database each time", async () => {
    const first = await freshDatabase("services-test");
    const second = await freshDatabase("services-test");
    expect(first).not.toBe(second);
    await query(first, "CREATE TABLE only_in_first (id int)");
    const tables = "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'";
    expect(await query(second, tables)).toEqual([{ n: 0 }]);
  });
});

describe("a private PostgresServer", () => {
  let server: PostgresServer;
  const rows = () => query(server.dsn, "SELECT label FROM kept ORDER BY id");
  const refused = () =>
    expect(query(server.dsn, "SELECT 1")).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });

  beforeAll(async () => {
    server = await PostgresServer.start({ name: "services-test" });
    await query(server.dsn, "CREATE TABLE kept (id serial PRIMARY KEY, label text)");
    await query(server.dsn, "INSERT INTO kept (label) VALUES ('before stop')");
  });
  afterAll(() => server?.destroy());

  it("refuses connections once stopped, and keeps its data across a restart on the same port", async () => {
    const port = server.port;
    await server.stop();
    await refused();

    await server.start();
    expect(server.port).toBe(port);
    expect(await rows()).toEqual([{ label: "before stop" }]);
  });

  it("recovers committed data after being SIGKILLed", async () => {
    await query(server.dsn, "INSERT INTO kept (label) VALUES ('before kill')");
    await server.kill();
    await refused();

    await server.start();
    expect(await rows()).toEqual([{ label: "before stop" }, { label: "before kill" }]);
    // The log shows that this start was a crash recovery, not a clean one.
    expect(readFileSync(server.logFile, "utf8")).toContain("automatic recovery in progress");
  });

  it("creates databases of its own", async () => {
    const dsn = await server.createDatabase("second_db");
    expect(await query(dsn, "SELECT current_database() AS name")).toEqual([{ name: "second_db" }]);
  });

  it("deletes its directory when destroyed", async () => {
    const other = await PostgresServer.start({ name: "services-test-destroy" });
    await other.destroy();
    expect(existsSync(other.rootDir)).toBe(false);
    await expect(query(other.dsn, "SELECT 1")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});

describe("a private RedisServer", () => {
  let server: RedisServer;
  const refused = () =>
    expect(pingRedis(server.url)).rejects.toMatchObject({ code: "ECONNREFUSED" });

  beforeAll(async () => {
    server = await RedisServer.start({ name: "services-test" });
  });
  afterAll(() => server?.destroy());

  it("answers PING", async () => {
    expect(await pingRedis(server.url)).toBe("PONG");
  });

  it("refuses connections once stopped, and answers again after a restart on the same port", async () => {
    const port = server.port;
    await server.stop();
    await refused();

    await server.start();
    expect(server.port).toBe(port);
    expect(await pingRedis(server.url)).toBe("PONG");
  });

  it("refuses connections once SIGKILLed, and answers again after a restart", async () => {
    await server.kill();
    await refused();

    await server.start();
    expect(await pingRedis(server.url)).toBe("PONG");
  });

  it("deletes its directory when destroyed", async () => {
    const other = await RedisServer.start({ name: "services-test-destroy" });
    await other.destroy();
    expect(existsSync(other.rootDir)).toBe(false);
  });
});
