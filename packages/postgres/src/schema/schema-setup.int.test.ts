/**
 * `setup()` on a real PostgreSQL: migrations under the advisory lock when many workers start at
 * once, refusals that change nothing, options checked before anything connects, and text the
 * `jsonb` type cannot hold (U+0000) stored exactly.
 */
import { Message, silentLogger, tool } from "@tenxgraph/core";
import { supportAgent } from "@tenxgraph/core/testing";
import { PgCheckpointer } from "@tenxgraph/postgres";
import type { PgCheckpointerOptions } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";
import { schemaFingerprint, sql } from "../support/pg-inspect.js";

const opened: PgCheckpointer[] = [];
const schemas: string[] = [];

/** A schema no other test uses, dropped after the file. */
function newSchema(prefix: string): string {
  const schema = freshSchema(prefix);
  schemas.push(schema);
  return schema;
}

/** A PostgreSQL-only store on `schema`, closed after the test. */
function openStore(schema: string): PgCheckpointer {
  const store = sharedStore(schema, { redis: false });
  opened.push(store);
  return store;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

afterAll(async () => {
  const dsn = testPostgresDsn();
  for (const schema of schemas) await dropSchema(dsn, schema);
});

async function appliedMigrations(schema: string): Promise<number[]> {
  const rows = await sql<{ version: number }>(
    testPostgresDsn(),
    `SELECT version FROM ${pg.escapeIdentifier(schema)}.tenxgraph_schema ORDER BY version`,
  );
  return rows.map((row) => row.version);
}

describe("setup() from many workers at once", () => {
  it("8 checkpointers on one empty schema all succeed, and each migration is applied once", async () => {
    const schema = newSchema("setup_race");
    const stores = Array.from({ length: 8 }, () => openStore(schema));
    await Promise.all(stores.map((store) => store.setup()));

    const versions = await appliedMigrations(schema);
    expect(versions.length).toBeGreaterThan(0);
    // 1, 2, …, latest: none skipped, none recorded twice.
    expect(versions).toEqual(versions.map((_, i) => i + 1));
    // Every one of them can use the store it migrated.
    await Promise.all(stores.map((store, i) => store.requestStop(`thread-${i}`)));
    expect(await stores[0]!.countStopRequests("thread-7")).toBe(1);
  });
});

describe("setup() refuses a schema it must not touch", () => {
  it("a schema migrated by a newer version: STORAGE_SCHEMA_001, and nothing changes", async () => {
    const schema = newSchema("setup_newer");
    await openStore(schema).setup();
    const latest = (await appliedMigrations(schema)).at(-1)!;
    const dsn = testPostgresDsn();
    await sql(dsn, `INSERT INTO ${pg.escapeIdentifier(schema)}.tenxgraph_schema VALUES ($1)`, [
      latest + 1,
    ]);
    const before = await schemaFingerprint(dsn, schema);

    const older = openStore(schema);
    const refusal = {
      code: "STORAGE_SCHEMA_001",
      message: expect.stringMatching(new RegExp(`schema '${schema}'.*version ${latest + 1}`)),
    };
    await expect(older.setup()).rejects.toMatchObject(refusal);
    // Every operation runs setup first, so none of them gets past the refusal either.
    await expect(older.getCheckpoint("any")).rejects.toMatchObject(refusal);
    await expect(older.requestStop("any")).rejects.toMatchObject(refusal);
    expect(await schemaFingerprint(dsn, schema)).toEqual(before);
  });

  it("a schema whose only table is a newer tenxgraph_schema: refused before any table is made", async () => {
    const schema = newSchema("setup_newer_empty");
    const dsn = testPostgresDsn();
    await sql(dsn, `CREATE SCHEMA ${schema}`);
    await sql(dsn, `CREATE TABLE ${schema}.tenxgraph_schema (version integer PRIMARY KEY)`);
    await sql(dsn, `INSERT INTO ${schema}.tenxgraph_schema VALUES (1000)`);
    const before = await schemaFingerprint(dsn, schema);

    await expect(openStore(schema).setup()).rejects.toMatchObject({ code: "STORAGE_SCHEMA_001" });
    expect(await schemaFingerprint(dsn, schema)).toEqual(before);
  });

  it("another program's tables named threads, messages…, without tenxgraph_schema: STORAGE_SCHEMA_002, untouched", async () => {
    const schema = newSchema("setup_foreign");
    const dsn = testPostgresDsn();
    await sql(dsn, `CREATE SCHEMA ${schema}`);
    await sql(dsn, `CREATE TABLE ${schema}.threads (id serial PRIMARY KEY, title text)`);
    await sql(dsn, `CREATE TABLE ${schema}.messages (id serial PRIMARY KEY, body text)`);
    await sql(dsn, `INSERT INTO ${schema}.threads (title) VALUES ('theirs')`);
    const before = await schemaFingerprint(dsn, schema);

    const store = openStore(schema);
    await expect(store.setup()).rejects.toMatchObject({
      code: "STORAGE_SCHEMA_002",
      message: expect.stringMatching(/threads, messages.*no tenxgraph_schema/),
    });
    expect(await schemaFingerprint(dsn, schema)).toEqual(before);
    expect(await sql(dsn, `SELECT title FROM ${schema}.threads`)).toEqual([{ title: "theirs" }]);
  });
});

describe("options", () => {
  const valid: PgCheckpointerOptions = { postgresDsn: "postgres://u@127.0.0.1:1/db" };
  const cases: [string, Partial<PgCheckpointerOptions> | Record<string, unknown>][] = [
    ["postgresDsn", { postgresDsn: "mysql://u@127.0.0.1/db" }],
    ["postgresDsn", { postgresDsn: undefined }],
    ["redisUrl", { redisUrl: "http://127.0.0.1:6379" }],
    ["schema", { schema: "app; DROP TABLE users" }],
    ["schema", { schema: "" }],
    ["cacheTtlSeconds", { redisUrl: "redis://127.0.0.1:1", cacheTtlSeconds: 0 }],
    ["pool.max", { pool: { max: 0 } }],
    ["pool.idleTimeoutMs", { pool: { idleTimeoutMs: 1.5 } }],
    ["pool.connectionTimeoutMs", { pool: { connectionTimeoutMs: -1 } }],
    ["statementTimeoutMs", { statementTimeoutMs: Number.NaN }],
    ["lockTimeoutMs", { lockTimeoutMs: "5000" }],
    ["retry.attempts", { retry: { attempts: 0 } }],
    ["retry.firstDelayMs", { retry: { firstDelayMs: -100 } }],
    ["preparedStatements", { preparedStatements: "yes" }],
    ["cacheKeyPrefix", { cacheKeyPrefix: "" }],
    ["cacheKeyPrefix", { cacheKeyPrefix: 42 }],
    ["cacheKeyPrefix", { cacheKeyPrefix: "my app:" }],
    ["cacheKeyPrefix", { cacheKeyPrefix: "x".repeat(101) }],
  ];

  it.each(cases)("a bad %s throws a TypeError naming it", (name, bad) => {
    const options = { ...valid, ...bad } as PgCheckpointerOptions;
    expect(() => new PgCheckpointer(options)).toThrow(TypeError);
    expect(() => new PgCheckpointer(options)).toThrow(name);
    expect(() => new PgCheckpointer(options)).toThrow(
      expect.objectContaining({ code: "CONFIG_001" }),
    );
  });
});

describe("preparedStatements", () => {
  /** The statement names `pg` was asked to send while `work` ran (undefined: unnamed). */
  async function statementNames(work: () => Promise<void>): Promise<(string | undefined)[]> {
    const names: (string | undefined)[] = [];
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [config] = args;
      if (typeof config === "object" && config !== null && "text" in config) {
        names.push((config as { name?: string }).name);
      }
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      await work();
    } finally {
      pg.Client.prototype.query = original;
    }
    return names;
  }

  async function runThread(preparedStatements: boolean | undefined): Promise<void> {
    const store = new PgCheckpointer({
      postgresDsn: testPostgresDsn(),
      schema: newSchema("prepared"),
      ...(preparedStatements === undefined ? {} : { preparedStatements }),
    });
    opened.push(store);
    const app = supportAgent({
      model: ["done"],
      tools: [],
      checkpointer: store,
      logger: silentLogger,
    });
    const result = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(await store.getCheckpoint("t")).toMatchObject({ status: "completed", version: 2 });
  }

  it("by default sends the store's statements by name, prepared once per connection", async () => {
    const names = await statementNames(() => runThread(undefined));
    const steps = names.filter((name) => name !== undefined);
    expect(steps.length).toBeGreaterThanOrEqual(3);
    expect(steps.every((name) => /^tenxgraph_[0-9a-f]{16}$/.test(name!))).toBe(true);
  });

  it("false sends every statement unnamed, and the store works the same", async () => {
    const names = await statementNames(() => runThread(false));
    expect(names.length).toBeGreaterThanOrEqual(3);
    expect(names.filter((name) => name !== undefined)).toEqual([]);
  });
});

describe("U+0000, which jsonb cannot hold", () => {
  it("in a message and in a tool result, round-trips exactly through PostgreSQL", async () => {
    const schema = newSchema("nul_text");
    const text = 'before\u0000after \\u0000 {"$tenxgraph.jsonText":"x"}';
    const echo = tool({
      name: "echo",
      description: "Returns its argument with a NUL inside.",
      schema: z.object({ tag: z.string() }),
      execute: async ({ tag }) => `${tag}\u0000${text}`,
    });
    const app = supportAgent({
      model: [{ toolCalls: [{ name: "echo", args: { tag: "t\u0000" } }] }, "done"],
      tools: [echo],
      checkpointer: openStore(schema),
      logger: silentLogger,
    });
    const result = await app.invoke({ messages: [Message.user(text)] }, { threadId: "nul" });
    expect(result.status).toBe("completed");

    // Read back by another checkpointer, from the tables, not from anything the run kept.
    const reader = openStore(schema);
    const messages = await reader.listMessages("nul");
    expect(messages).toEqual(JSON.parse(JSON.stringify(result.state.messages)));
    expect(Message.text(messages[0]!)).toBe(text);
    expect(messages[1]!.toolCalls![0]!.arguments).toBe(JSON.stringify({ tag: "t\u0000" }));
    expect(Message.text(messages[2]!)).toBe(`t\u0000\u0000${text}`);
    const [entry] = await reader.listCalls("nul");
    expect(JSON.stringify(entry?.status === "completed" && entry.result)).toContain(
      JSON.stringify(`t\u0000\u0000${text}`).slice(1, -1),
    );
  });
});
