/**
 * The store-level races of store-worker.ts and what must hold after them, for any number of
 * worker processes on any store: the SQLite suite and the PostgreSQL suite run the same races.
 */
import { Message } from "@tenxgraph/core";
import { expect } from "vitest";
import { openStore } from "../../support/store-spec.js";
import type { StoreSpec } from "../../support/store-spec.js";
import type { WorkerMessage, WorkerProcess } from "../../support/worker-process.js";
import { duplicates, readThread } from "./read-thread.js";
import type { CounterWrite, LostClaim, WonClaim } from "./store-worker.js";
import { request } from "./worker-commands.js";

/** Creates `threadId` at version 1 with `counter: 0`, through a connection of the test's own. */
export async function createCounterThread(spec: StoreSpec, threadId: string): Promise<void> {
  const own = openStore(spec);
  try {
    await own.putCheckpoint({
      threadId,
      incarnation: "first-life",
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
  } finally {
    await own.close();
  }
}

/** Sends `command` to every worker in one tick and collects the report of `type` each sends. */
export function everyWorker(
  workers: readonly WorkerProcess[],
  command: WorkerMessage,
  type: string,
): Promise<WorkerMessage[]> {
  return Promise.all(workers.map((worker) => request(worker, command, type)));
}

/**
 * Every worker increments the counter of a new thread `count` times by compare-and-swap,
 * retrying on STORAGE_CONFLICT_001: no update is lost, each version is written once, each write
 * built on the version right before it, and every write's message is in the transcript once.
 */
export async function raceCounter(
  workers: readonly WorkerProcess[],
  spec: StoreSpec,
  threadId: string,
  count: number,
): Promise<void> {
  const total = workers.length * count;
  await createCounterThread(spec, threadId);
  const reports = await everyWorker(workers, { type: "increment", threadId, count }, "incremented");
  const writes = reports.flatMap((report) => report.writes as CounterWrite[]);
  const { checkpoint, messages } = await readThread(spec, threadId);

  expect(writes).toHaveLength(total);
  expect(checkpoint?.values.counter).toBe(total);
  expect(checkpoint?.version).toBe(1 + total);
  const versions = writes.map((write) => write.version).sort((a, b) => a - b);
  expect(versions).toEqual(Array.from({ length: total }, (_, i) => i + 2));
  // Each write was computed from the version right before it: none built on a stale read.
  expect(writes.filter((write) => write.counter !== write.version - 1)).toEqual([]);
  // Every write's message is in the transcript once, and each process's in its own order.
  expect(messages).toHaveLength(total);
  expect(duplicates(messages.map((message) => message.id))).toEqual([]);
  for (let worker = 0; worker < workers.length; worker++) {
    const own = messages.map(Message.text).filter((text) => text.startsWith(`worker ${worker} `));
    expect(own).toEqual(Array.from({ length: count }, (_, i) => `worker ${worker} write ${i}`));
  }
  // The race was real: some reads went stale before their write.
  const conflicts = reports.map((report) => report.conflicts as number);
  expect(Math.max(...conflicts)).toBeGreaterThan(0);
}

/**
 * Every worker claims every key of a new thread (inserts), then takes every key over from
 * attempt 1 (in-doubt retries racing), then records its own attempts while also trying the
 * superseded ones, as zombies would: one winner per key each time, and the fence keeps every
 * zombie out. Workers' `worker` params must be their index in `workers`.
 */
export async function raceClaims(
  workers: readonly WorkerProcess[],
  spec: StoreSpec,
  threadId: string,
  keys: readonly string[],
): Promise<void> {
  await createCounterThread(spec, threadId);
  const claim = (expectedAttempt: number, batch: number) =>
    everyWorker(workers, { type: "claim", threadId, keys, expectedAttempt, batch }, "claimed");

  // Inserts: batches of 3, each one transaction.
  const firstOwners = expectOneWinnerPerKey(keys, await claim(0, 3), 1);
  let ledger = (await readThread(spec, threadId)).ledger;
  expect(
    ledger.map((entry) => [entry.key, entry.status, entry.attempt, entry.ownerRunId]).sort(),
  ).toEqual(keys.map((key) => [key, "started", 1, firstOwners.get(key)]).sort());

  const second = await claim(1, 1);
  const secondOwners = expectOneWinnerPerKey(keys, second, 2);

  const stale = keys.map((key) => ({ key, attempt: 1 }));
  const completions = await Promise.all(
    workers.map((worker, i) => {
      const own = (second[i]!.won as WonClaim[]).map(({ key, attempt }) => ({ key, attempt }));
      return request(worker, { type: "complete", threadId, own, stale }, "completed");
    }),
  );
  const accepted = completions.flatMap((report, worker) =>
    (report.accepted as { key: string; stale: boolean }[]).map((a) => ({ ...a, worker })),
  );
  expect(accepted.filter((a) => a.stale)).toEqual([]);
  expect(accepted.map((a) => a.key).sort()).toEqual([...keys].sort());

  ledger = (await readThread(spec, threadId)).ledger;
  expect(ledger).toHaveLength(keys.length);
  for (const entry of ledger) {
    expect(entry).toMatchObject({
      status: "completed",
      attempt: 2,
      ownerRunId: secondOwners.get(entry.key),
    });
    const winner = Number(secondOwners.get(entry.key)!.split("-")[1]);
    expect(entry.status === "completed" && entry.result).toEqual({ by: winner, stale: false });
  }
}

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
