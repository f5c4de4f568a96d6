/**
 * `durableCheckpointEveryStep: false` on PostgreSQL: between a run's terminal points its steps
 * go to Redis only (or nowhere, without Redis), a worker killed mid-run is resumed from the
 * cached step by a fresh process, or from the last durable checkpoint once Redis lost it, and a
 * Redis that cannot take a step makes the run write it durably instead.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Message } from "@tenxgraph/core";
import type { CheckpointWrite } from "@tenxgraph/core/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGraph } from "../concurrency/support/agent-graph.js";
import { startsByKey } from "../concurrency/support/effect-log.js";
import { effectTool } from "../concurrency/support/effect-tool.js";
import { startTurn } from "../concurrency/support/turn-race.js";
import type { TurnWorkerParams } from "../concurrency/support/turn-worker.js";
import { killWorkers, startWorkers } from "../concurrency/support/worker-pool.js";
import { dropStore } from "../support/fresh-store.js";
import { RedisServer, redisCommand } from "@tenxgraph/test-servers";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import type { PostgresStoreSpec } from "../support/store-spec.js";
import type { WorkerProcess } from "../support/worker-process.js";
import { freshSchema, sharedStore } from "../../packages/postgres/src/support/pg-store.js";
import { threadCacheKey } from "./support/cache-key.js";
import { gate } from "./support/gate.js";
import { stateRows } from "../../packages/postgres/src/support/pg-inspect.js";

const STEP_CACHE_TIMEOUT = 60_000;
const dsn = testPostgresDsn();
const schema = freshSchema("step_cache");
const logPath = join(tmpdir(), `tenxgraph-step-cache-${randomUUID()}.jsonl`);
let redis: RedisServer;
let spec: PostgresStoreSpec;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  redis = await RedisServer.start({ name: "step-cache" });
  spec = { kind: "postgres", dsn, schema, redisUrl: redis.url };
});

afterAll(async () => {
  await killWorkers(workers);
  await redis?.destroy();
  await dropStore(spec);
  rmSync(logPath, { force: true });
});

/** The cached step of a thread in Redis, as the checkpointer stored it, or `null`. */
async function cachedStep(threadId: string): Promise<CheckpointWrite | null> {
  if (!redis.running) return null;
  const json = await redisCommand(redis.url, [
    "HGET",
    await threadCacheKey(dsn, schema, threadId),
    "step",
  ]);
  return json === "" ? null : (JSON.parse(json) as CheckpointWrite);
}

/**
 * The durable writes of a run that creates its thread before any step: the start, written
 * twice because the run lease of a new thread is claimed between them (see run-lease.ts).
 */
const START = [
  ["running", "MAIN"],
  ["running", "MAIN"],
];

async function durableStates(threadId: string) {
  return (await stateRows(dsn, schema, threadId)).map((row) => [row.status, row.currentNode]);
}

/**
 * Runs one turn in this process with `note_a` held after its effect, and returns what PostgreSQL
 * and Redis held at that moment and at the end.
 */
async function turnHeldInTool(threadId: string, options: { redis: boolean }) {
  const store = sharedStore(
    schema,
    options.redis ? { redis: false, redisUrl: redis.url } : { redis: false },
  );
  const held = gate();
  const app = agentGraph({
    checkpointer: store,
    tools: [
      effectTool({ name: "note_a", logPath, hold: () => held.pass() }),
      effectTool({ name: "note_b", logPath }),
    ],
    turns: [
      [
        { name: "note_a", tag: threadId },
        { name: "note_b", tag: threadId },
      ],
    ],
  });
  try {
    const config = { threadId, durableCheckpointEveryStep: false };
    const run = app.invoke({ messages: [Message.user("note")] }, config);
    await held.reached;
    const midRun = { states: await durableStates(threadId), step: await cachedStep(threadId) };
    held.open();
    const result = await run;
    const messages = await sharedStore(schema, { redis: false }).listMessages(threadId);
    return { midRun, result, messages, states: await durableStates(threadId) };
  } finally {
    await store.close();
  }
}

describe("between terminal points", () => {
  it("with Redis: PostgreSQL gets no step writes; the step is cached in Redis, and superseded at the end", async () => {
    const { midRun, result, messages, states } = await turnHeldInTool("cached", { redis: true });

    // Only the run's start write reached PostgreSQL; the model's step is in Redis.
    expect(midRun.states).toEqual(START);
    expect(midRun.step).toMatchObject({
      expectedVersion: 2,
      currentNode: "TOOL",
      status: "running",
    });
    expect(midRun.step?.newMessages.map((message) => message.role)).toEqual(["assistant"]);
    // The terminal write carried every message the steps kept only in Redis.
    expect(states).toEqual([...START, ["completed", null]]);
    expect(messages).toEqual(JSON.parse(JSON.stringify(result.state.messages)));
    expect(await cachedStep("cached")).toBeNull();
  });

  it("without Redis: nothing is written between the start and the end", async () => {
    const { midRun, result, messages, states } = await turnHeldInTool("uncached", { redis: false });

    // As PgCheckpointerOptions.redisUrl documents, and as the in-memory and SQLite stores do.
    const why = "no step write between the run's start and its end";
    expect(midRun.states, why).toEqual(START);
    expect(midRun.step).toBeNull();
    expect(states).toEqual([...START, ["completed", null]]);
    expect(messages).toEqual(JSON.parse(JSON.stringify(result.state.messages)));
  });

  it("with Redis down: every step is written durably instead", async () => {
    await redis.stop();
    try {
      const { midRun, states } = await turnHeldInTool("redis-down", { redis: true });
      expect(midRun.states).toEqual([...START, ["running", "TOOL"]]);
      expect(states).toEqual([
        ...START,
        ["running", "TOOL"],
        ["running", "MAIN"],
        ["completed", null],
      ]);
    } finally {
      await redis.start();
    }
  });
});

/** A turn worker on the store with Redis, running with `durableCheckpointEveryStep: false`. */
async function stepCacheWorker(name: string): Promise<WorkerProcess> {
  const params: TurnWorkerParams = {
    store: spec,
    logPath,
    worker: name,
    durableCheckpointEveryStep: false,
  };
  const [worker] = (await startWorkers("./turn-worker.ts", [params])) as [WorkerProcess];
  workers.push(worker);
  return worker;
}

/**
 * A worker runs a turn to its tool step's end, both calls recorded, and is SIGKILLed while the
 * model prepares the final reply: the tool step exists only in Redis. Returns that cached step.
 */
async function killedAfterToolStep(threadId: string): Promise<CheckpointWrite> {
  const worker = await stepCacheWorker(`${threadId}-killed`);
  await startTurn(worker, threadId, { hold: "reply" });
  await worker.waitFor((message) => message.type === "holding" && message.at === "reply");
  const step = await cachedStep(threadId);
  expect(step).toMatchObject({ expectedVersion: 2, currentNode: "MAIN" });
  expect(await durableStates(threadId)).toEqual(START);
  await worker.kill();
  return step!;
}

async function continueInFreshWorker(threadId: string) {
  const worker = await stepCacheWorker(`${threadId}-fresh`);
  const outcome = await (await startTurn(worker, threadId, { continue: true }))();
  expect(outcome).toMatchObject({ status: "completed", code: null });
  return sharedStore(schema, { redis: false }).listMessages(threadId);
}

describe("a worker SIGKILLed mid-run", () => {
  it(
    "is resumed by a fresh process from the step cached in Redis: no tool runs again",
    async () => {
      const threadId = "killed-cached";
      const step = await killedAfterToolStep(threadId);

      const messages = await continueInFreshWorker(threadId);
      const cachedIds = step.newMessages.map((message) => message.id);
      expect(messages.map((message) => message.role)).toEqual([
        ...["user", "assistant", "tool", "tool", "assistant"],
      ]);
      expect(messages.slice(1, 4).map((message) => message.id)).toEqual(cachedIds);
      expect([...startsByKey(logPath, threadId).values()]).toEqual([1, 1]);
    },
    STEP_CACHE_TIMEOUT,
  );

  it(
    "with Redis restarted (and so empty) before the resume: resumes from the last durable checkpoint",
    async () => {
      const threadId = "killed-flushed";
      const step = await killedAfterToolStep(threadId);
      await redis.stop();
      await redis.start();

      const messages = await continueInFreshWorker(threadId);
      // The killed run's steps were lost with Redis (the documented trade-off): the model was
      // asked again and its calls, new ones with new keys, ran again.
      const lostIds = new Set(step.newMessages.map((message) => message.id));
      expect(messages.map((message) => message.role)).toEqual([
        ...["user", "assistant", "tool", "tool", "assistant"],
      ]);
      expect(messages.filter((message) => lostIds.has(message.id))).toEqual([]);
      expect([...startsByKey(logPath, threadId).values()]).toEqual([1, 1, 1, 1]);
    },
    STEP_CACHE_TIMEOUT,
  );
});
