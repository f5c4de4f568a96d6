/**
 * SIGKILL in the middle of `copyThread` (`POST /threads/{id}/copy`): the copy is one
 * transaction, so a crash keeps all of it or none, and a copy cut off leaves nothing that
 * blocks the same copy made again.
 *
 * On PostgreSQL the kill lands inside the transaction for certain: the test holds a lock that
 * stops the copy after its versions and messages are written and before its ledger entries are;
 * the worker is killed while it waits. SQLite writes a whole copy in one synchronous call, so
 * there the kill is timed at random over a thread large enough to take tens of milliseconds to
 * copy, several times, and at least one kill must land before the copy reported done.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { Message } from "@tenxgraph/core";
import type { Checkpointer, CheckpointWrite, ThreadCheckpoint } from "@tenxgraph/core/storage";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { dropStore, freshStore, waitUntilUnlocked } from "../support/fresh-store.js";
import { openStore, type PostgresStoreSpec, type StoreSpec } from "../support/store-spec.js";
import { until } from "../support/until.js";
import { WorkerProcess } from "../support/worker-process.js";

const WORKER = new URL("./support/copy-worker.ts", import.meta.url);
const SOURCE = "copy-source";
const TEST_TIMEOUT_MS = 120_000;

describe("SIGKILL mid copyThread", { timeout: TEST_TIMEOUT_MS }, () => {
  it("on PostgreSQL + Redis: killed inside the copy's transaction, nothing of the copy is kept", async () => {
    await withStore("postgres", async (spec) => {
      const source = await buildSource(spec, { versions: 20, messagesPerVersion: 5 });
      const target = "copy-killed-inside";
      const worker = await copyWorker(spec, target);
      const locker = new pg.Client({ connectionString: (spec as PostgresStoreSpec).dsn });
      await locker.connect();
      try {
        // SHARE lets the copy lock the source's entries (ROW SHARE) but not insert its own.
        await locker.query("BEGIN");
        await locker.query(
          `LOCK TABLE "${(spec as PostgresStoreSpec).schema}".tool_executions IN SHARE MODE`,
        );
        worker.send({ type: "go" });
        await until(
          () => copyWaitsOnLedger(locker, (spec as PostgresStoreSpec).schema),
          "the copy waiting to insert its ledger entries",
          { context: () => worker.stderr },
        );
        expect(await worker.kill()).toMatchObject({ signal: "SIGKILL" });
        expect(worker.messages.map((m) => m.type)).not.toContain("copied");
        await locker.query("ROLLBACK");
      } finally {
        await locker.end();
        await worker.kill();
      }
      await waitUntilUnlocked(spec);
      await expectAbsentThenCopyable(spec, target, source);
    });
  });

  it("on SQLite: killed at random over a large copy, each copy is whole or absent", async () => {
    await withStore("sqlite", async (spec) => {
      const source = await buildSource(spec, { versions: 20, messagesPerVersion: 1000 });
      const copyMs = await timedCopy(spec, "copy-timed");
      const outcomes: ("whole" | "absent")[] = [];
      let killedBeforeDone = 0;
      for (let trial = 0; trial < 6; trial += 1) {
        const target = `copy-killed-${trial}`;
        const worker = await copyWorker(spec, target);
        try {
          worker.send({ type: "go" });
          await worker.waitForType("copying");
          // Over the copy and a little past it: most kills land inside it, some after it.
          await sleep(Math.random() * copyMs * 1.5);
          await worker.kill();
          if (!worker.messages.some((m) => m.type === "copied")) killedBeforeDone += 1;
        } finally {
          await worker.kill();
        }
        outcomes.push(await wholeOrAbsent(spec, target, source));
      }
      expect(
        killedBeforeDone,
        `outcomes ${outcomes.join(", ")}; copy took ${copyMs} ms`,
      ).toBeGreaterThan(0);
      const absent = outcomes.indexOf("absent");
      if (absent >= 0) await expectAbsentThenCopyable(spec, `copy-killed-${absent}`, source);
    });
  });
});

/** What a thread holds, read through the contract: versions (without id and life), transcripts, ledger. */
async function contents(checkpointer: Checkpointer, threadId: string) {
  const versions = await checkpointer.listVersions(threadId);
  const transcripts = await Promise.all(
    versions.map((v) => checkpointer.listMessages(threadId, { version: v.version })),
  );
  return {
    versions: versions.map(({ threadId: _, incarnation: __, ...rest }: ThreadCheckpoint) => rest),
    transcripts,
    calls: await checkpointer.listCalls(threadId),
  };
}

type Contents = Awaited<ReturnType<typeof contents>>;

/** The copy `target` after the kill: the whole source, or nothing at all (failing otherwise). */
async function wholeOrAbsent(spec: StoreSpec, target: string, source: Contents) {
  const checkpointer = openStore(spec);
  try {
    const copy = await contents(checkpointer, target);
    if ((await checkpointer.getCheckpoint(target)) === null) {
      expect(copy).toEqual({ versions: [], transcripts: [], calls: [] });
      return "absent";
    }
    expect(copy).toEqual(source);
    return "whole";
  } finally {
    await checkpointer.close();
  }
}

/** Nothing of `target` is kept, and copying to it again now succeeds and is whole. */
async function expectAbsentThenCopyable(spec: StoreSpec, target: string, source: Contents) {
  expect(await wholeOrAbsent(spec, target, source)).toBe("absent");
  const checkpointer = openStore(spec);
  try {
    await checkpointer.copyThread(SOURCE, target);
    expect(await contents(checkpointer, target)).toEqual(source);
  } finally {
    await checkpointer.close();
  }
}

/**
 * The source thread: `versions` completed versions, each adding messages, and a completed
 * ledger entry per version. SQLite builds it at synchronous=NORMAL: only its size matters here.
 */
async function buildSource(
  spec: StoreSpec,
  size: { versions: number; messagesPerVersion: number },
): Promise<Contents> {
  const checkpointer =
    spec.kind === "sqlite"
      ? new SqliteCheckpointer({ path: spec.path, synchronous: "NORMAL" })
      : openStore(spec);
  try {
    await checkpointer.setup();
    for (let version = 0; version < size.versions; version += 1) {
      const newMessages = Array.from({ length: size.messagesPerVersion }, (_, i) =>
        Message.user(`message ${i} of version ${version}: ${"x".repeat(120)}`),
      );
      await checkpointer.putCheckpoint(sourceWrite(version, newMessages));
      const key = `m${version}:call_1`;
      await checkpointer.claimCalls(SOURCE, [
        { key, toolName: "charge", ownerRunId: "run-1", leaseMs: 60_000, expectedAttempt: 0 },
      ]);
      await checkpointer.completeCall(SOURCE, { key, attempt: 1 }, { charged: version });
    }
    return await contents(checkpointer, SOURCE);
  } finally {
    await checkpointer.close();
  }
}

function sourceWrite(version: number, newMessages: Message[]): CheckpointWrite {
  return {
    threadId: SOURCE,
    incarnation: "first-life",
    userId: "alice",
    expectedVersion: version,
    step: version,
    currentNode: "MAIN",
    status: "completed",
    values: { total: version },
    interrupts: [],
    resumeAnswers: {},
    newMessages,
  };
}

/** How long one copy of the source takes here, in ms (copied to `scratch`, kept). */
async function timedCopy(spec: StoreSpec, scratch: string): Promise<number> {
  const checkpointer = openStore(spec);
  try {
    const started = performance.now();
    await checkpointer.copyThread(SOURCE, scratch);
    return performance.now() - started;
  } finally {
    await checkpointer.close();
  }
}

/** A worker that will copy the source to `target` when sent `go`, ready for it. */
async function copyWorker(spec: StoreSpec, target: string): Promise<WorkerProcess> {
  const worker = new WorkerProcess(WORKER, { spec, from: SOURCE, to: target });
  await worker.waitForType("ready", 30_000);
  return worker;
}

/** True once a session waits for a lock on the store's ledger table (the copy's insert). */
async function copyWaitsOnLedger(client: pg.Client, schema: string): Promise<boolean> {
  const { rows } = await client.query<{ waiting: string }>(
    `SELECT count(*) AS waiting FROM pg_locks l
     JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname = 'tool_executions' AND NOT l.granted`,
    [schema],
  );
  return Number(rows[0]!.waiting) > 0;
}

async function withStore(
  kind: StoreSpec["kind"],
  body: (spec: StoreSpec) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-copy-kill-"));
  const spec = freshStore(kind, "copy-kill", dir);
  try {
    await body(spec);
  } finally {
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
