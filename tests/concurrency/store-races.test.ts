import { Message } from "@tenxgraph/core";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkerMessage, WorkerProcess } from "../support/worker-process.js";
import { duplicates, readThread } from "./support/read-thread.js";
import type {
  CounterWrite,
  LostClaim,
  StoreWorkerParams,
  WonClaim,
} from "./support/store-worker.js";
import { createTempStore } from "./support/temp-store.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";
import { request } from "./support/worker-commands.js";

const WORKERS = 4;
const store = createTempStore("store-races");
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  const params: StoreWorkerParams[] = Array.from({ length: WORKERS }, (_, worker) => ({
    dbPath: store.dbPath,
    worker,
  }));
  workers = await startWorkers("./store-worker.ts", params);
});

afterAll(async () => {
  await killWorkers(workers);
  store.remove();
});

/** Creates `threadId` at version 1 with `counter: 0`, through a connection of the test's own. */
async function createThread(threadId: string): Promise<void> {
  const own = new SqliteCheckpointer({ path: store.dbPath });
  await own.putCheckpoint({
    threadId,
    userId: null,
    expectedVersion: 0,
    step: 0,
    currentNode: null,
    status: "completed",
    values: { counter: 0 },
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
  });
  await own.close();
}

/** Sends `command` to every worker in one tick and collects the report of `type` each sends. */
function everyWorker(command: WorkerMessage, type: string): Promise<WorkerMessage[]> {
  return Promise.all(workers.map((worker) => request(worker, command, type)));
}

describe("several processes write one thread through SqliteCheckpointer", () => {
  it("compare-and-swap increments retried on STORAGE_CONFLICT_001: no update is lost, each version once", async () => {
    const count = 50;
    await createThread("counter");
    const reports = await everyWorker(
      { type: "increment", threadId: "counter", count },
      "incremented",
    );
    const writes = reports.flatMap((report) => report.writes as CounterWrite[]);
    const { checkpoint, messages } = await readThread(store.dbPath, "counter");

    expect(writes).toHaveLength(WORKERS * count);
    expect(checkpoint?.values.counter).toBe(WORKERS * count);
    expect(checkpoint?.version).toBe(1 + WORKERS * count);
    const versions = writes.map((write) => write.version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: WORKERS * count }, (_, i) => i + 2));
    // Each write was computed from the version right before it: none built on a stale read.
    expect(writes.filter((write) => write.counter !== write.version - 1)).toEqual([]);
    // Every write's message is in the transcript once, and each process's in its own order.
    expect(messages).toHaveLength(WORKERS * count);
    expect(duplicates(messages.map((message) => message.id))).toEqual([]);
    for (let worker = 0; worker < WORKERS; worker++) {
      const own = messages.map(Message.text).filter((text) => text.startsWith(`worker ${worker} `));
      expect(own).toEqual(Array.from({ length: count }, (_, i) => `worker ${worker} write ${i}`));
    }
    // The race was real: some reads went stale before their write.
    const conflicts = reports.map((report) => report.conflicts as number);
    expect(Math.max(...conflicts)).toBeGreaterThan(0);
  });

  it("ledger claims of the same keys: one winner per key, takeovers too, and the fence keeps zombies out", async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `m-${i}:call_1`);
    await createThread("claims");

    // Inserts: every process claims every key (batches of 3, each one transaction).
    const first = await everyWorker(
      { type: "claim", threadId: "claims", keys, expectedAttempt: 0, batch: 3 },
      "claimed",
    );
    const firstOwners = expectOneWinnerPerKey(keys, first, 1);
    let ledger = (await readThread(store.dbPath, "claims")).ledger;
    expect(
      ledger.map((entry) => [entry.key, entry.status, entry.attempt, entry.ownerRunId]).sort(),
    ).toEqual(keys.map((key) => [key, "started", 1, firstOwners.get(key)]).sort());

    // Takeovers: every process takes over every key from attempt 1 (in-doubt retries racing).
    const second = await everyWorker(
      { type: "claim", threadId: "claims", keys, expectedAttempt: 1, batch: 1 },
      "claimed",
    );
    const secondOwners = expectOneWinnerPerKey(keys, second, 2);

    // Completions: each winner records its own attempt while every process also tries to
    // record the superseded attempt 1 of every key, as zombies of the first claims would.
    const stale = keys.map((key) => ({ key, attempt: 1 }));
    const completions = await Promise.all(
      workers.map((worker, i) => {
        const own = (second[i]!.won as WonClaim[]).map(({ key, attempt }) => ({ key, attempt }));
        return request(worker, { type: "complete", threadId: "claims", own, stale }, "completed");
      }),
    );
    const accepted = completions.flatMap((report, worker) =>
      (report.accepted as { key: string; stale: boolean }[]).map((a) => ({ ...a, worker })),
    );
    expect(accepted.filter((a) => a.stale)).toEqual([]);
    expect(accepted.map((a) => a.key).sort()).toEqual([...keys].sort());

    ledger = (await readThread(store.dbPath, "claims")).ledger;
    for (const entry of ledger) {
      expect(entry).toMatchObject({
        status: "completed",
        attempt: 2,
        ownerRunId: secondOwners.get(entry.key),
      });
      const winner = Number(secondOwners.get(entry.key)!.split("-")[1]);
      expect(entry.status === "completed" && entry.result).toEqual({ by: winner, stale: false });
    }
  });
});

/**
 * Each key was won by exactly one process, at `attempt`; every loser was told the winner's run
 * id. Returns the winner's run id by key.
 */
function expectOneWinnerPerKey(
  keys: readonly string[],
  reports: readonly WorkerMessage[],
  attempt: number,
): Map<string, string> {
  const owners = new Map<string, string>();
  const wins = reports.flatMap((report) =>
    (report.won as WonClaim[]).map((won) => ({ ...won, owner: report.ownerRunId as string })),
  );
  expect(duplicates(wins.map((won) => won.key))).toEqual([]);
  expect(wins.map((won) => won.key).sort()).toEqual([...keys].sort());
  for (const won of wins) {
    expect(won.attempt).toBe(attempt);
    owners.set(won.key, won.owner);
  }
  for (const report of reports) {
    for (const lost of report.lost as LostClaim[]) {
      expect(lost.ownerRunId).toBe(owners.get(lost.key));
    }
  }
  return owners;
}
