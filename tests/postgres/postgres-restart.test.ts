/**
 * A private PostgreSQL stopped (or killed) in the middle of a run and started again: the run
 * rides through on retries, or fails with a clear STORAGE_FAILURE_001; whatever was committed
 * stays, and `invoke(null)` finishes the thread with each tool's effect once, or twice where an
 * unrecorded call is in doubt and retried (the documented default).
 */
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Message, isTenxgraphError } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import type { PgCheckpointerOptions } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentGraph } from "../concurrency/support/agent-graph.js";
import { startsByKey } from "../concurrency/support/effect-log.js";
import { effectTool } from "../concurrency/support/effect-tool.js";
import { startTurn as startWorkerTurn } from "../concurrency/support/turn-race.js";
import type { TurnWorkerParams } from "../concurrency/support/turn-worker.js";
import { sendCommand } from "../concurrency/support/worker-commands.js";
import { killWorkers, startWorkers } from "../concurrency/support/worker-pool.js";
import { PostgresServer, childPids } from "@tenxgraph/test-servers";
import { testRedisUrl } from "@tenxgraph/test-servers/vitest";
import type { StoreSpec } from "../support/store-spec.js";
import type { WorkerProcess } from "../support/worker-process.js";
import { freshSchema } from "../../packages/postgres/src/support/pg-store.js";
import { eventually } from "./support/eventually.js";
import { gate, type Gate } from "./support/gate.js";
import { globalCounters } from "./support/global-meter.js";
import { sql, stateRows } from "../../packages/postgres/src/support/pg-inspect.js";
import { recordingLogger, type RecordingLogger } from "@tenxgraph/core/testing";
import { streamRun } from "./support/streamed-run.js";

const RESTART_TIMEOUT = 60_000;
/** Far above what the frozen-server test needs once statements have a client-side deadline. */
const FROZEN_TIMEOUT = 30_000;
const counters = globalCounters();
const logPath = join(tmpdir(), `tenxgraph-pg-restart-${randomUUID()}.jsonl`);
let server: PostgresServer;
let open: PgCheckpointer[] = [];
/** Resumes the server's processes after `freeze`; `null` while they run. */
let thaw: (() => void) | null = null;

beforeAll(async () => {
  server = await PostgresServer.start({ name: "restart" });
  // Prepared transactions hold the locks that keep a write in flight (lockThreadRow).
  await sql(server.dsn, "ALTER SYSTEM SET max_prepared_transactions = 8");
  await server.stop();
  await server.start();
}, RESTART_TIMEOUT);

afterEach(async () => {
  // A test that failed with the server down (or frozen) must not leave the next one without it.
  thaw?.();
  thaw = null;
  await server.start();
  await Promise.all(open.map((store) => store.close()));
  open = [];
});

afterAll(async () => {
  await server?.destroy();
  rmSync(logPath, { force: true });
});

/**
 * One test's world: its schema on the private server, a logger, the gate `note_a` holds at after
 * its effect, and the gate the model's final reply waits at (open unless a test closes it).
 */
interface Scene {
  schema: string;
  store: PgCheckpointer;
  logger: RecordingLogger;
  held: Gate;
  reply: Gate;
  app: ReturnType<typeof agentGraph>;
}

function scene(
  name: string,
  options: Partial<PgCheckpointerOptions> = {},
  schema = freshSchema(name),
): Scene {
  const logger = recordingLogger();
  const store = new PgCheckpointer({ postgresDsn: server.dsn, schema, logger, ...options });
  open.push(store);
  const world = { schema, store, logger, held: gate(), reply: gate() } as Scene;
  world.reply.open();
  world.app = agentGraph({
    checkpointer: store,
    tools: [
      effectTool({ name: "note_a", logPath, hold: () => world.held.pass() }),
      effectTool({ name: "note_b", logPath }),
    ],
    turns: [
      [
        { name: "note_a", tag: name },
        { name: "note_b", tag: name },
      ],
    ],
    beforeReply: (answered) => (answered === 1 ? world.reply.pass() : Promise.resolve()),
    compile: { logger },
  });
  return world;
}

/** Starts a turn whose first tool holds at the scene's gate, after its effect. */
function startTurn(world: Scene, threadId: string) {
  return streamRun(world.app, { messages: [Message.user("note it")] }, { threadId });
}

/**
 * Waits until `note_a` holds at the gate and its sibling `note_b` is recorded: from then on the
 * run sends nothing to the server until the gate opens (its polls aside), so stopping the server
 * lands exactly there.
 */
async function heldAfterSibling(world: Scene, threadId: string): Promise<void> {
  await world.held.reached;
  await siblingRecorded(world.schema, threadId);
  await repliesSent();
}

/**
 * Waits until no other connection is running a statement. A write's rows are visible from its
 * commit, a moment before its backend sends the reply: a server stopped in that moment cuts the
 * reply off, and the run rightly reports the write as in doubt (seen once on a loaded machine).
 * A backend reports itself idle only once its reply is sent.
 */
async function repliesSent(): Promise<void> {
  await eventually("the app's connections have sent their replies", async () => {
    const busy = await sql(
      server.dsn,
      `SELECT pid FROM pg_stat_activity
       WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'`,
    );
    return busy.length === 0 ? true : undefined;
  });
}

async function siblingRecorded(schema: string, threadId: string): Promise<void> {
  await eventually("note_b's result is recorded", async () => {
    const rows = await sql(
      server.dsn,
      `SELECT 1 FROM ${schema}.tool_executions
       WHERE thread_id = $1 AND tool_name = 'note_b' AND status = 'completed'`,
      [threadId],
    );
    return rows.length > 0 ? true : undefined;
  });
}

/** The thread in the private server's tables: its state rows and its transcript's ids. */
async function stored(world: Scene, threadId: string) {
  const messages = await sql<{ message_id: string }>(
    server.dsn,
    `SELECT message_id FROM ${world.schema}.messages WHERE thread_id = $1 ORDER BY seq`,
    [threadId],
  );
  return {
    states: await stateRows(server.dsn, world.schema, threadId),
    messageIds: messages.map((row) => row.message_id),
  };
}

function effectsPerCall(threadId: string): number[] {
  return [...startsByKey(logPath, threadId).values()];
}

describe.each(["stop", "kill"] as const)(
  "PostgreSQL %s-ped and started while a tool runs",
  (how) => {
    it(
      "the run retries through the restart and completes; nothing is lost or repeated",
      async () => {
        const world = scene(`restart_${how}`, { retry: { attempts: 12, firstDelayMs: 50 } });
        const threadId = `through-${how}`;
        const run = startTurn(world, threadId);
        await heldAfterSibling(world, threadId);
        await server[how]();
        // The pool must see its idle connections end before the tool returns. Otherwise the
        // step write goes out on a socket whose end is still unread, and the run rightly
        // reports it in doubt, as a write on a connection that broke in flight.
        await world.logger.next((r) => r.message.includes("connection broke"));
        await new Promise((resolve) => setImmediate(resolve));
        world.held.open();
        // The tool returned while the server was down: its record, riding in the tool step's
        // write (ledger protocol v2), waits for it. Not sent yet, so retried.
        await world.logger.next(
          (r) => r.message.includes("retrying") && r.fields.operation === "putCheckpoint",
        );
        await server.start();

        expect(await run.ended).toEqual({ status: "completed", error: null });
        const { states } = await stored(world, threadId);
        expect(states.map((state) => state.version)).toEqual(run.versions);
        expect(states.at(-1)?.status).toBe("completed");
        expect(effectsPerCall(threadId)).toEqual([1, 1]);
        const ledger = await world.store.listCalls(threadId);
        expect(ledger.map((entry) => [entry.status, entry.attempt])).toEqual([
          ["completed", 1],
          ["completed", 1],
        ]);
      },
      RESTART_TIMEOUT,
    );
  },
);

describe("PostgreSQL stopped while a step write is in flight", () => {
  it(
    "the run fails with STORAGE_FAILURE_001 saying the write may or may not have been applied; invoke(null) then finishes it from the ledger, the riding call in doubt",
    async () => {
      const world = scene("in_flight", { lockTimeoutMs: RESTART_TIMEOUT });
      const threadId = "in-flight";
      const run = startTurn(world, threadId);
      await heldAfterSibling(world, threadId);
      const lock = await lockThreadRow(world.schema, threadId);
      world.held.open();
      await eventually("the step write waits for the thread's row lock", stepWriteWaiting);
      await server.stop();

      const { error } = await run.ended;
      expect(error).toMatchObject({
        code: "STORAGE_FAILURE_001",
        message: expect.stringMatching(
          /could not reach PostgreSQL.*may or may not have been applied/,
        ),
      });
      await server.start();
      await lock.release();
      await expectContinuedFromLedger(world, threadId, run.versions);
    },
    RESTART_TIMEOUT,
  );

  it(
    "killed instead: the worker process running the write survives and reports STORAGE_FAILURE_001",
    async () => {
      const schema = freshSchema("killed_in_flight");
      const threadId = "killed-in-flight";
      const store: StoreSpec = { kind: "postgres", dsn: server.dsn, schema };
      const params: TurnWorkerParams = { store, logPath, worker: "w" };
      const [worker] = (await startWorkers("./turn-worker.ts", [params])) as [WorkerProcess];
      try {
        const turn = await startWorkerTurn(worker, threadId, { hold: "tool" });
        await worker.waitForType("holding");
        await siblingRecorded(schema, threadId);
        const lock = await lockThreadRow(schema, threadId);
        await sendCommand(worker, { type: "release" });
        await eventually("the step write waits for the thread's row lock", stepWriteWaiting);
        await server.kill();

        // A pooled connection that breaks under a running statement must not crash the process.
        const outcome = await turn();
        expect(outcome).toMatchObject({
          status: null,
          code: "STORAGE_FAILURE_001",
          message: expect.stringMatching(/may or may not have been applied/),
        });
        await server.start();
        await lock.release();
        const continuing = scene("killed", {}, schema);
        continuing.held.open(); // note_a, in doubt, runs again: nothing holds it this time
        await expectContinuedFromLedger(continuing, threadId, outcome.versions);
      } finally {
        await killWorkers([worker]);
      }
    },
    RESTART_TIMEOUT,
  );
});

/**
 * After a run whose tool step write never committed: everything it reported committed is
 * stored and the thread still stands at the tool node. Continuing replays note_b, recorded on
 * its own when it returned; note_a's result rode in the lost write (ledger protocol v2), so it
 * is in doubt and, `retry`, runs again: the window a crash leaves, here an outage. The
 * transcript only grows.
 */
async function expectContinuedFromLedger(world: Scene, threadId: string, committed: number[]) {
  const before = await stored(world, threadId);
  expect(before.states.map((state) => state.version)).toEqual(committed);
  expect(before.states.at(-1)).toMatchObject({ status: "running", currentNode: "TOOL" });

  const continued = streamRun(world.app, null, { threadId });
  expect(await continued.ended).toEqual({ status: "completed", error: null });
  expect(continued.replayed).toHaveLength(1);
  expect(effectsPerCall(threadId).sort()).toEqual([1, 2]);
  const after = await stored(world, threadId);
  expect(after.messageIds.slice(0, before.messageIds.length)).toEqual(before.messageIds);
  expect(after.messageIds).toHaveLength(before.messageIds.length + 3);
}

describe("PostgreSQL down for longer than the retry budget", () => {
  it(
    "the run fails clearly, continuing fails clearly while it is down, and invoke(null) finishes the thread once it is back",
    async () => {
      const world = scene("long_outage", { retry: { attempts: 2, firstDelayMs: 10 } });
      const threadId = "long-outage";
      const recordFailures = await counters.sum("tenxgraph.tool.ledger_record_failures");
      const inDoubt = await counters.sum("tenxgraph.tool.in_doubt");
      const run = startTurn(world, threadId);
      await heldAfterSibling(world, threadId);
      await server.stop();
      world.held.open();

      const unreachable = {
        code: "STORAGE_FAILURE_001",
        message: expect.stringContaining("could not reach PostgreSQL"),
      };
      expect((await run.ended).error).toMatchObject(unreachable);
      // note_a returned while the server was down: its result could not be recorded.
      const [lost] = world.logger.find("error", "COMPLETED but could not be recorded");
      expect(lost?.fields).toMatchObject({ threadId, tool: "note_a" });
      expect(await counters.sum("tenxgraph.tool.ledger_record_failures")).toBe(recordFailures + 1);
      await expect(world.app.invoke(null, { threadId })).rejects.toMatchObject(unreachable);

      await server.start();
      const continued = streamRun(world.app, null, { threadId });
      expect(await continued.ended).toEqual({ status: "completed", error: null });
      // note_b was recorded and is replayed; note_a is in doubt and, by default, runs again.
      expect(continued.replayed).toHaveLength(1);
      expect(effectsPerCall(threadId)).toEqual([2, 1]);
      expect(await counters.sum("tenxgraph.tool.in_doubt")).toBe(inDoubt + 1);
      expect(world.logger.find("warn", "IN DOUBT")).toHaveLength(1);
      const { states } = await stored(world, threadId);
      expect(states.map((state) => state.version)).toEqual([
        ...run.versions,
        ...continued.versions,
      ]);
    },
    RESTART_TIMEOUT,
  );
});

describe("durableCheckpointEveryStep: false, PostgreSQL down at the run's last write", () => {
  it(
    "the run fails clearly; the steps cached in Redis survive it, and invoke(null) resumes from them",
    async () => {
      const world = scene("cached_steps", {
        redisUrl: testRedisUrl(),
        retry: { attempts: 2, firstDelayMs: 10 },
      });
      const threadId = "cached-steps";
      const config = { threadId, durableCheckpointEveryStep: false };
      world.held.open();
      world.reply = gate();
      const run = streamRun(world.app, { messages: [Message.user("note it")] }, config);
      await world.reply.reached;
      await server.stop();
      world.reply.open();

      const { error } = await run.ended;
      expect(error).toMatchObject({
        code: "STORAGE_FAILURE_001",
        message: expect.stringContaining("could not reach PostgreSQL"),
      });
      await server.start();
      // Only the start is durable (written twice on a new thread, around its run lease); the
      // model's and the tools' steps live in Redis.
      expect((await stored(world, threadId)).states).toMatchObject([
        { currentNode: "MAIN" },
        { currentNode: "MAIN" },
      ]);

      const continued = streamRun(world.app, null, config);
      expect(await continued.ended).toEqual({ status: "completed", error: null });
      // It resumed after the tool step: no call was even looked up in the ledger again.
      expect(continued.replayed).toEqual([]);
      expect(effectsPerCall(threadId)).toEqual([1, 1]);
      const roles = await world.store.listMessages(threadId);
      expect(roles.map((message) => message.role)).toEqual([
        ...["user", "assistant", "tool", "tool", "assistant"],
      ]);
    },
    RESTART_TIMEOUT,
  );
});

describe("PostgreSQL frozen (SIGSTOP), as a network partition looks to the client", () => {
  it(
    "a statement in flight does not hold the run forever: it fails with STORAGE_FAILURE_001, and invoke(null) finishes once the server thaws",
    async () => {
      const world = scene("frozen", {
        statementTimeoutMs: 1000,
        pool: { connectionTimeoutMs: 1000 },
        retry: { attempts: 1 },
      });
      const threadId = "frozen";
      const run = startTurn(world, threadId);
      await heldAfterSibling(world, threadId);
      thaw = freeze();
      world.held.open();

      // The tool returned, so the run now records it and writes its step, on a server that
      // answers nothing: only a client-side deadline can end that wait.
      const { error } = await run.ended;
      thaw();
      thaw = null;
      expect(error).toMatchObject({ code: "STORAGE_FAILURE_001" });

      expect(await continueAfterThaw(world, threadId)).toEqual({
        status: "completed",
        error: null,
      });
      // note_a's record may or may not have landed when the server thawed; if not, it was in
      // doubt and retried (the default), and the log says so.
      const retried = world.logger.find("warn", "IN DOUBT").length;
      expect(effectsPerCall(threadId)).toEqual([1 + retried, 1]);
    },
    FROZEN_TIMEOUT,
  );
});

/**
 * `invoke(null)` on a thread whose last write was in flight when the server froze. That write
 * can still land after the thaw: its backend reads the statement only then, and commits it
 * though its client has gone (seen in CI, the thread at version 3 where the continue had read
 * 2). A continue that read the thread before it lands is refused by the version check with
 * nothing of it committed, and says retrying is safe: so one refusal of that kind is retried,
 * as a caller would, and anything else is the answer.
 */
async function continueAfterThaw(world: Scene, threadId: string) {
  const first = await streamRun(world.app, null, { threadId }).ended;
  if (!isTenxgraphError(first.error, "STORAGE_CONFLICT_001")) return first;
  expect(first.error).toMatchObject({ committed: { inputCommitted: false, versions: [] } });
  return streamRun(world.app, null, { threadId }).ended;
}

/**
 * SIGSTOPs the server's processes, postmaster first so it forks no new one: connections stay
 * open and nothing answers, as when the network to the server drops packets. Returns `thaw`.
 */
function freeze(): () => void {
  const pidFile = readFileSync(join(server.dataDir, "postmaster.pid"), "utf8");
  const postmaster = Number(pidFile.split("\n")[0]);
  signal(postmaster, "SIGSTOP");
  const processes = [postmaster, ...childPids(postmaster)];
  for (const pid of processes.slice(1)) signal(pid, "SIGSTOP");
  return () => {
    for (const pid of processes) signal(pid, "SIGCONT");
  };
}

/** Signals `pid` unless it is gone: a process that exited needs neither freezing nor thawing. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ESRCH") throw error;
  }
}

/**
 * Takes the thread's row lock in a prepared transaction: the lock belongs to no session, so it
 * outlives the server's shutdown or crash, and the write waiting for it can never commit before
 * the server goes away. `release` rolls it back once the server is up again.
 */
async function lockThreadRow(
  schema: string,
  threadId: string,
): Promise<{ release(): Promise<void> }> {
  const gid = `lock-${randomUUID()}`;
  const client = new pg.Client({ connectionString: server.dsn });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(`SELECT 1 FROM ${schema}.threads WHERE thread_id = $1 FOR UPDATE`, [
      threadId,
    ]);
    await client.query(`PREPARE TRANSACTION '${gid}'`);
  } finally {
    await client.end();
  }
  return { release: () => sql(server.dsn, `ROLLBACK PREPARED '${gid}'`).then(() => undefined) };
}

async function stepWriteWaiting(): Promise<true | undefined> {
  const rows = await sql(
    server.dsn,
    `SELECT 1 FROM pg_stat_activity WHERE application_name = 'tenxgraph'
     AND wait_event_type = 'Lock' AND query LIKE '%tenxgraph_put_checkpoint%'`,
  );
  return rows.length > 0 ? true : undefined;
}
