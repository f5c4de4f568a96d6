/**
 * Stores made by an earlier release (the fixtures, see release-scenario.ts), reopened by today's
 * code: setup migrates them, every thread reads as the release wrote it, and the paused runs
 * continue to the end, replaying the tool results the release recorded (no tool runs twice).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { silentLogger } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { dropSchema, freshSchema } from "../../packages/postgres/src/support/pg-store.js";
import {
  DONE_THREAD,
  FANOUT_THREAD,
  FIXTURE_SCHEMA,
  PAUSED_THREAD,
  fanOutGraph,
  supportGraph,
  type ToolRuns,
} from "./release-scenario.js";

const FIXTURES = new URL("fixtures/", import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** A copy of the release's SQLite file, opened by today's code. */
function sqliteStore(): Checkpointer {
  const dir = mkdtempSync(join(tmpdir(), "txg-upgrade-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(join(FIXTURES, "sqlite-release.db"), join(dir, "threads.db"));
  return new SqliteCheckpointer({ path: join(dir, "threads.db") });
}

/**
 * The release's dump loaded into a schema of its own (the dump names its schema; psql's
 * `\restrict` lines are dropped, the rest is plain SQL), opened by today's code.
 */
async function postgresStore(redis: boolean): Promise<Checkpointer> {
  const dsn = testPostgresDsn();
  const schema = freshSchema("release_upgrade");
  const dump = readFileSync(join(FIXTURES, "postgres-release.sql"), "utf8")
    .split("\n")
    .filter((line) => !line.startsWith("\\"))
    .join("\n")
    .replaceAll(FIXTURE_SCHEMA, schema);
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await client.query(dump);
  } finally {
    await client.end();
  }
  cleanups.push(() => dropSchema(dsn, schema));
  return new PgCheckpointer({
    postgresDsn: dsn,
    schema,
    logger: silentLogger,
    ...(redis ? { redisUrl: testRedisUrl() } : {}),
  });
}

const STORES: { label: string; open: () => Promise<Checkpointer> }[] = [
  { label: "SQLite", open: async () => sqliteStore() },
  { label: "PostgreSQL", open: () => postgresStore(false) },
  { label: "PostgreSQL with Redis", open: () => postgresStore(true) },
];

describe.each(STORES)("a $label store made by the release", ({ open }) => {
  it("reads every thread as the release wrote it, history included", async () => {
    const store = await open();
    try {
      await store.setup();
      const paused = await store.getCheckpoint(PAUSED_THREAD);
      expect(paused).toMatchObject({
        status: "interrupted",
        version: 3,
        step: 1,
        currentNode: "TOOL",
        resumeAnswers: {},
        parentThreadId: null,
      });
      expect(paused).not.toHaveProperty("frontier");
      expect(paused!.interrupts).toMatchObject([
        { node: "TOOL", toolCallId: "call_2", message: "Charge?", value: { order_id: "4821" } },
      ]);
      expect(await store.getCheckpoint(FANOUT_THREAD)).toMatchObject({
        status: "interrupted",
        currentNode: "ASK",
        frontier: { tasks: [{ node: "ASK" }, { node: "WORK" }], joins: {} },
        interrupts: [{ id: "ASK:1", value: "Which colour?", node: "ASK" }],
        values: { planned: true },
      });
      const history = await store.listVersions(DONE_THREAD);
      expect(history.map((v) => [v.version, v.status, v.currentNode])).toEqual([
        [6, "completed", null],
        [5, "running", "MAIN"],
        [4, "running", "TOOL"],
        [3, "interrupted", "TOOL"],
        [2, "running", "TOOL"],
        [1, "running", "MAIN"],
      ]);
      const answered = history.find((v) => v.version === 4)!;
      expect(Object.values(answered.resumeAnswers)).toEqual([{ approved: true }]);
      const messages = await store.listMessages(DONE_THREAD);
      expect(messages.at(-1)).toMatchObject({
        role: "assistant",
        content: "Order 4821 is charged.",
      });
      expect((await store.listCalls(PAUSED_THREAD)).map((e) => [e.toolName, e.status])).toEqual([
        ["lookup_order", "completed"],
        ["charge_card", "interrupted"],
        ["send_receipt", "completed"],
      ]);
    } finally {
      await store.close();
    }
  });

  it("continues the paused runs, replaying the results the release recorded", async () => {
    const store = await open();
    try {
      const runs: ToolRuns = {};
      const support = supportGraph(store, runs);
      const done = await support.invoke(
        { resume: { approved: true } },
        { threadId: PAUSED_THREAD },
      );
      expect(done.status).toBe("completed");
      // lookup_order and send_receipt ran under the release; only the approved charge runs now.
      expect(runs).toEqual({ charge_card: 1 });
      const calls = await store.listCalls(PAUSED_THREAD);
      expect(calls.map((e) => [e.toolName, e.status, e.attempt])).toEqual([
        ["lookup_order", "completed", 1],
        ["charge_card", "completed", 2],
        ["send_receipt", "completed", 1],
      ]);
      expect((await store.listMessages(PAUSED_THREAD)).at(-1)).toMatchObject({
        content: "Order 4821 is charged.",
      });

      const fanned = await fanOutGraph(store, runs).invoke(
        { resume: "blue" },
        { threadId: FANOUT_THREAD },
      );
      expect(fanned.status).toBe("completed");
      expect(fanned.state).toMatchObject({ planned: true, worked: true, colour: "blue" });
      expect(runs).toMatchObject({ ASK: 1, DONE: 1 });
      expect((await store.getCheckpoint(FANOUT_THREAD))?.version).toBeGreaterThan(3);
    } finally {
      await store.close();
    }
  });
});
