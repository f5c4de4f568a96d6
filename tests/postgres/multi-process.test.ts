/**
 * Real worker processes on one PostgreSQL schema with the shared Redis in front: the same races
 * the SQLite suite runs (tests/concurrency), with two processes and with eight. Effects are
 * counted from an external append-only log, never from the store under test.
 */
import { tmpdir } from "node:os";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../support/fresh-store.js";
import { openStore } from "../support/store-spec.js";
import type { StoreSpec } from "../support/store-spec.js";
import type { WorkerProcess } from "../support/worker-process.js";
import { agentGraph } from "../concurrency/support/agent-graph.js";
import { readEffects } from "../concurrency/support/effect-log.js";
import { readThread } from "../concurrency/support/read-thread.js";
import type { StopTargetParams } from "../concurrency/support/stop-target-worker.js";
import { raceClaims, raceCounter } from "../concurrency/support/store-race.js";
import type { StoreWorkerParams } from "../concurrency/support/store-worker.js";
import { createTempStore } from "../concurrency/support/temp-store.js";
import { expectNothingLostOrRepeated, raceTurns } from "../concurrency/support/turn-race.js";
import type { TurnWorkerParams } from "../concurrency/support/turn-worker.js";
import { request, sendCommand } from "../concurrency/support/worker-commands.js";
import { killWorkers, startWorkers } from "../concurrency/support/worker-pool.js";

const WORKERS = 8;
/** Starting eight workers at once on two busy cores can take a while. */
const START_TIMEOUT = 90_000;
/** The external effect log (a file), beside nothing else: the threads live in PostgreSQL. */
const folder = createTempStore("postgres-multi-process");
const spec: StoreSpec = freshStore("postgres", "multi_process", tmpdir());
const race = { spec, logPath: folder.logPath };
let own: Checkpointer;

beforeAll(async () => {
  // Migrated once here, so the workers race on turns and writes, not on setup.
  own = openStore(spec);
  await own.setup();
});

afterAll(async () => {
  await own?.close();
  await dropStore(spec);
  folder.remove();
});

/**
 * Starts `count` workers of `script` for the enclosing describe block and kills them after it:
 * one block's processes at a time, so the machine is never asked to start all of them at once.
 */
function workerPool(script: string, params: (index: number) => unknown, count = WORKERS) {
  let workers: WorkerProcess[] = [];
  beforeAll(async () => {
    const all = Array.from({ length: count }, (_, index) => params(index));
    workers = await startWorkers(script, all, START_TIMEOUT);
  }, START_TIMEOUT);
  afterAll(() => killWorkers(workers));
  return (processes = count) => workers.slice(0, processes);
}

describe("store races between processes (PostgreSQL + Redis)", () => {
  const storeWorkers = workerPool("./store-worker.ts", (worker): StoreWorkerParams => ({
    store: spec,
    worker,
  }));

  it.each([2, WORKERS])(
    "%i processes: compare-and-swap increments retried on STORAGE_CONFLICT_001 end at the exact total",
    async (processes) => {
      await raceCounter(storeWorkers(processes), spec, `counter-${processes}`, 200 / processes);
    },
  );

  it(`${WORKERS} processes claim the same ledger keys: one winner per key, takeovers too, and the fence keeps zombies out`, async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `m-${i}:call_1`);
    await raceClaims(storeWorkers(), spec, "claims", keys);
  });
});

describe("turns raced by processes on one thread (PostgreSQL + Redis)", () => {
  const turnWorkers = workerPool("./turn-worker.ts", (i): TurnWorkerParams => ({
    ...race,
    store: spec,
    worker: `w${i}`,
  }));

  it.each([2, WORKERS])(
    "%i processes: they serialise or are refused; no update is lost, no call runs twice",
    async (processes) => {
      const threadId = `turns-${processes}`;
      const outcomes = await raceTurns(turnWorkers(processes), threadId, 16 / processes + 4);
      expect((await readThread(spec, threadId)).checkpoint?.status).toBe("completed");
      await expectNothingLostOrRepeated(race, threadId, outcomes);
    },
    60_000,
  );
});

describe("stop() from another process", () => {
  const stopTargets = workerPool(
    "./stop-target-worker.ts",
    (): StopTargetParams => ({ store: spec, logPath: folder.logPath }),
    1,
  );

  it("reaches a run in a worker at its next stop poll, even while its tool ignores the signal", async () => {
    const threadId = "stopped";
    const [stopTarget] = stopTargets() as [WorkerProcess];
    const ran = request(stopTarget, { type: "run", threadId, blocker: "ignore_signal" }, "ran");
    await stopTarget.waitFor(
      (message) => message.type === "blocked" && message.threadId === threadId,
    );
    // This process's own graph runs nothing on the thread: the stop reaches the worker only
    // through the store.
    await agentGraph({ checkpointer: own, tools: [], turns: [] }).stop({ threadId });
    const afterStop = stopTarget.messages.length;
    expect(await ran).toMatchObject({ status: "stopped", code: null });

    // Polls are sequential: when the request committed, one poll may have been running and one
    // report of an earlier poll still on its way here. The poll after those sees the request.
    const polls = stopTarget.messages
      .slice(afterStop)
      .filter((message) => message.type === "stop_poll" && message.threadId === threadId);
    expect(polls.filter((poll) => poll.seen === 0).length).toBeLessThanOrEqual(2);
    expect(polls.map((poll) => poll.seen)).toContain(1);

    await sendCommand(stopTarget, { type: "release" });
    await stopTarget.waitFor(
      (message) => message.type === "returned" && message.threadId === threadId,
    );
    const { checkpoint, messages, ledger } = await readThread(spec, threadId);
    expect(checkpoint).toMatchObject({ status: "stopped", currentNode: "TOOL" });
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    // The late return was not recorded, and nothing ran after the stop.
    expect(ledger.map((entry) => [entry.toolName, entry.status])).toEqual([
      ["ignore_signal", "started"],
    ]);
    const effects = readEffects(folder.logPath).filter((effect) => effect.threadId === threadId);
    expect(effects.map((effect) => `${effect.event} ${effect.tool}`)).toEqual([
      "start ignore_signal",
      "returned ignore_signal",
    ]);
  });
});
