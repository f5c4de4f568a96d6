/**
 * A process that races other processes on the store itself, through the test's checkpointer
 * (SQLite or PostgreSQL) with no engine on top: compare-and-swap increments of a counter, and
 * ledger claims and fenced completions. It does what the parent commands and reports what it won.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Message, isTenxgraphError } from "@tenxgraph/core";
import type { AttemptRef, ThreadCheckpoint } from "@tenxgraph/core/storage";
import { openStore } from "../../support/store-spec.js";
import type { StoreSpec } from "../../support/store-spec.js";
import { report, workerParams } from "../../support/worker-process.js";
import type { WorkerMessage } from "../../support/worker-process.js";
import { nextCommand } from "./worker-commands.js";

/** The parameters of a store worker. */
export interface StoreWorkerParams {
  /** The store every process of the test shares. */
  store: StoreSpec;
  worker: number;
}

/** One successful increment: the version it committed and the counter value it wrote. */
export interface CounterWrite {
  version: number;
  counter: number;
}

/** A key won by a claim, with the attempt it now holds. */
export interface WonClaim {
  key: string;
  attempt: number;
}

/** A key lost to another claimant, with the owner the store reported. */
export interface LostClaim {
  key: string;
  ownerRunId: string;
}

const { store: spec, worker } = workerParams<StoreWorkerParams>();
const store = openStore(spec);
await store.setup();
await report({ type: "ready" });
for (;;) {
  const command = await nextCommand("increment", "claim", "complete", "exit");
  if (command.type === "exit") break;
  if (command.type === "increment") await report(await increment(command));
  if (command.type === "claim") await report(await claim(command));
  if (command.type === "complete") await report(await complete(command));
}
await store.close();
process.exit(0);

/** `count` increments of `values.counter`, each retried on a stale version until it lands. */
async function increment(command: WorkerMessage): Promise<WorkerMessage> {
  const threadId = command.threadId as string;
  const writes: CounterWrite[] = [];
  let conflicts = 0;
  while (writes.length < (command.count as number)) {
    const current = (await store.getCheckpoint(threadId))!;
    const counter = (current.values.counter as number) + 1;
    // A run does work between its read and its write; this pause is that work, and it lets
    // the other processes' commits land in between.
    await sleep(1);
    try {
      const version = await store.putCheckpoint(nextWrite(current, counter, writes.length));
      writes.push({ version, counter });
    } catch (error) {
      if (!isTenxgraphError(error) || error.code !== "STORAGE_CONFLICT_001") throw error;
      conflicts += 1;
    }
  }
  return { type: "incremented", writes, conflicts };
}

/** The write that follows `current`: the counter, and one message naming this worker's write. */
function nextWrite(current: ThreadCheckpoint, counter: number, index: number) {
  return {
    threadId: current.threadId,
    incarnation: current.incarnation,
    userId: null,
    expectedVersion: current.version,
    step: current.step + 1,
    currentNode: null,
    status: "completed" as const,
    values: { counter },
    interrupts: [],
    resumeAnswers: {},
    newMessages: [Message.user(`worker ${worker} write ${index}`)],
  };
}

/**
 * Claims every key, in an order of this worker's own and in batches of `batch`, each batch one
 * `claimCalls` transaction: reports the keys won and, for each lost one, the owner it lost to.
 */
async function claim(command: WorkerMessage): Promise<WorkerMessage> {
  const threadId = command.threadId as string;
  const expectedAttempt = command.expectedAttempt as number;
  const ownerRunId = `worker-${worker}-attempt-${expectedAttempt + 1}`;
  const keys = rotate(command.keys as string[], worker * 7);
  const won: WonClaim[] = [];
  const lost: LostClaim[] = [];
  for (let i = 0; i < keys.length; i += command.batch as number) {
    const batch = keys.slice(i, i + (command.batch as number));
    const claims = batch.map((key) => ({
      key,
      toolName: "charge",
      ownerRunId,
      leaseMs: 60_000,
      expectedAttempt,
    }));
    // One batch per tick of the event loop, so the processes' batches interleave.
    await sleep(1);
    for (const result of await store.claimCalls(threadId, claims)) {
      if (result.won) won.push({ key: result.key, attempt: result.attempt });
      else lost.push({ key: result.key, ownerRunId: result.entry.ownerRunId });
    }
  }
  return { type: "claimed", ownerRunId, won, lost };
}

/**
 * Records a result for each attempt in `own` (claims this worker won) and tries the same for
 * each stale attempt in `stale` (claims superseded since): reports which writes the fence let through.
 */
async function complete(command: WorkerMessage): Promise<WorkerMessage> {
  const threadId = command.threadId as string;
  const attempts = [
    ...(command.own as AttemptRef[]).map((attempt) => ({ attempt, stale: false })),
    ...(command.stale as AttemptRef[]).map((attempt) => ({ attempt, stale: true })),
  ];
  const accepted: { key: string; attempt: number; stale: boolean }[] = [];
  for (const { attempt, stale } of rotate(attempts, worker * 5)) {
    if (await store.completeCall(threadId, attempt, { by: worker, stale })) {
      accepted.push({ ...attempt, stale });
    }
  }
  return { type: "completed", accepted };
}

/** `items` starting at `offset`: each worker walks the keys from a different place. */
function rotate<T>(items: readonly T[], offset: number): T[] {
  const start = items.length === 0 ? 0 : offset % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}
