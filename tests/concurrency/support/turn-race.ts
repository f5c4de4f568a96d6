/**
 * Turns raced by turn-worker.ts processes on one thread, and what must hold after them, for any
 * number of workers on any store: the SQLite suite and the PostgreSQL suite share them.
 */
import { expect } from "vitest";
import type { StoreSpec } from "../../support/store-spec.js";
import type { WorkerProcess } from "../../support/worker-process.js";
import { startsByKey } from "./effect-log.js";
import { answeredKeys, duplicates, readThread, toolCallKeys } from "./read-thread.js";
import type { HoldPoint, TurnOutcome } from "./turn-worker.js";
import { sendCommand } from "./worker-commands.js";

/** The store the workers share and the external log their tools write to. */
export interface RaceStore {
  spec: StoreSpec;
  logPath: string;
}

/** Round numbers are unique within a test file, so an outcome is never taken for another's. */
let rounds = 0;

/**
 * Tells `worker` to run a turn (or, with `continue`, to continue the thread); returns a
 * function awaiting its outcome.
 */
export async function startTurn(
  worker: WorkerProcess,
  threadId: string,
  options: { delayMs?: number; hold?: HoldPoint; round?: number; continue?: boolean } = {},
): Promise<() => Promise<TurnOutcome>> {
  const round = options.round ?? rounds++;
  const { delayMs = 0, hold = null } = options;
  const command = { type: "turn", threadId, round, delayMs, hold, continue: options.continue };
  await sendCommand(worker, command);
  return async () =>
    (await worker.waitFor(
      (message) => message.type === "turn" && message.round === round,
    )) as unknown as TurnOutcome;
}

/**
 * Every worker gets `turn` in the same tick. One (alternating by `index`) starts at once, the
 * others 0 to 8 ms later, so over the rounds the later starts land before, during and after the
 * first run's writes: the interleavings differ, the invariants must not.
 */
export async function raceRound(
  workers: readonly WorkerProcess[],
  threadId: string,
  index: number,
): Promise<TurnOutcome[]> {
  const round = rounds++;
  const lag = (index % 5) * 2;
  const first = index % workers.length;
  const outcomes = await Promise.all(
    workers.map((worker, i) =>
      startTurn(worker, threadId, { round, delayMs: i === first ? 0 : lag }),
    ),
  );
  return Promise.all(outcomes.map((outcome) => outcome()));
}

/**
 * Races `count` rounds of turns on `threadId`: in each, every run completes or is refused
 * before it commits a write that conflicts, and at least one completes (a refusal needs another
 * run's commit). THREAD_003 is the refusal of a turn landing while another run waits for its
 * tools. Returns every outcome.
 */
export async function raceTurns(
  workers: readonly WorkerProcess[],
  threadId: string,
  count: number,
): Promise<TurnOutcome[]> {
  const outcomes: TurnOutcome[] = [];
  for (let index = 0; index < count; index++) {
    const round = await raceRound(workers, threadId, index);
    outcomes.push(...round);
    for (const outcome of round) {
      expect(outcome.status ?? outcome.code, JSON.stringify(outcome)).toMatch(
        /^(completed|STORAGE_CONFLICT_001|THREAD_003)$/,
      );
    }
    expect(round.filter((outcome) => outcome.status === "completed")).not.toEqual([]);
  }
  return outcomes;
}

/**
 * What must hold however the runs interleaved: every committed write has its own version and
 * none is missing; the transcript is exactly the messages the runs committed, each once; every
 * tool call in it ran exactly once (per the external log) and was answered exactly once; no
 * call ran that the transcript does not show.
 */
export async function expectNothingLostOrRepeated(
  store: RaceStore,
  threadId: string,
  outcomes: TurnOutcome[],
): Promise<void> {
  const { checkpoint, messages } = await readThread(store.spec, threadId);
  const versions = outcomes.flatMap((outcome) => outcome.versions).sort((a, b) => a - b);
  expect(versions).toEqual(Array.from({ length: checkpoint!.version }, (_, i) => i + 1));

  const ids = messages.map((message) => message.id);
  expect(duplicates(ids)).toEqual([]);
  expect(new Set(ids)).toEqual(new Set(outcomes.flatMap((outcome) => outcome.committedIds)));
  for (const outcome of outcomes) {
    const copies = ids.filter((id) => id === outcome.inputId).length;
    if (outcome.status === "completed") expect(copies).toBe(1);
    // A run refused at its first write leaves nothing behind.
    if (outcome.versions.length === 0) expect(copies).toBe(0);
  }

  const calls = toolCallKeys(messages).sort();
  const starts = startsByKey(store.logPath, threadId);
  expect(duplicates(calls)).toEqual([]);
  expect([...starts.keys()].sort()).toEqual(calls);
  expect([...starts.entries()].filter(([, count]) => count !== 1)).toEqual([]);
  expect(answeredKeys(messages).sort()).toEqual(calls);
}
