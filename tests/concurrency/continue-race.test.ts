import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkerProcess } from "../support/worker-process.js";
import type {
  ContinueCommand,
  ContinueOutcome,
  ContinueWorkerParams,
} from "./support/continue-worker.js";
import { startsByKey } from "./support/effect-log.js";
import { answeredKeys, readThread, toolCallKeys } from "./support/read-thread.js";
import type { SeededCalls } from "./support/seed-thread.js";
import { CLAIM_STALE_AFTER_MS, PENDING_CALLS, seedPendingCalls } from "./support/seed-thread.js";
import { createTempStore } from "./support/temp-store.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";
import { sendCommand } from "./support/worker-commands.js";

const RACE_ROUNDS = 6;
const store = createTempStore("continue-race");
let workers: WorkerProcess[] = [];
/** Threads of the racing rounds; odd rounds crashed mid-tool, holding a claim of `call_1`. */
const raced: SeededCalls[] = [];
let rounds = 0;

beforeAll(async () => {
  // Seeded before the workers start, so the dead claims are stale by the time they race.
  for (let round = 0; round < RACE_ROUNDS; round++) {
    raced.push(
      await seedPendingCalls(store.spec, `race-${round}`, PENDING_CALLS, round % 2 ? [0] : []),
    );
  }
  const params: ContinueWorkerParams[] = ["w0", "w1"].map((worker) => ({
    store: store.spec,
    logPath: store.logPath,
    worker,
  }));
  workers = await startWorkers("./continue-worker.ts", params);
});

afterAll(async () => {
  await killWorkers(workers);
  store.remove();
});

/** Tells `worker` to continue `threadId`; returns a function awaiting the outcome. */
async function startContinue(
  worker: WorkerProcess,
  threadId: string,
  options: Partial<Pick<ContinueCommand, "delayMs" | "hold" | "round">> = {},
): Promise<() => Promise<ContinueOutcome>> {
  const { round = rounds++, delayMs = 0, hold = false } = options;
  const command: ContinueCommand = { type: "continue", threadId, round, delayMs, hold };
  await sendCommand(worker, { ...command });
  return async () =>
    (await worker.waitFor(
      (message) => message.type === "continued" && message.round === round,
    )) as unknown as ContinueOutcome;
}

/**
 * What must hold however the two continuations interleaved: the thread completed; every
 * pending call ran exactly once per the external log and is answered once in the transcript,
 * followed by one final reply; each committed write has its own version.
 */
async function expectEachCallRanOnce(
  threadId: string,
  seeded: SeededCalls,
  outcomes: ContinueOutcome[],
) {
  const { checkpoint, messages, ledger } = await readThread(store.spec, threadId);
  expect(checkpoint?.status).toBe("completed");
  const starts = startsByKey(store.logPath, threadId);
  expect(Object.fromEntries(starts)).toEqual(
    Object.fromEntries(seeded.keys.map((key) => [key, 1])),
  );
  expect(toolCallKeys(messages)).toEqual(seeded.keys);
  expect(answeredKeys(messages).sort()).toEqual([...seeded.keys].sort());
  expect(messages.map((message) => message.role)).toEqual([
    "user",
    "assistant",
    "tool",
    "tool",
    "assistant",
  ]);
  expect(ledger.map((entry) => entry.status)).toEqual(["completed", "completed"]);
  const versions = [...seeded.versions, ...outcomes.flatMap((outcome) => outcome.versions)];
  expect(versions.sort((a, b) => a - b)).toEqual(
    Array.from({ length: checkpoint!.version }, (_, i) => i + 1),
  );
}

describe("two processes continue one crashed thread whose tool node has pending calls", () => {
  it("the later one waits on the live claims of the first, past claimStaleAfterMs, and replays their results; nothing runs twice", async () => {
    const [a, b] = workers as [WorkerProcess, WorkerProcess];
    const seeded = await seedPendingCalls(store.spec, "live-claims", PENDING_CALLS);
    // A claims both calls, runs their effects, and holds them open.
    const first = await startContinue(a, "live-claims", { hold: true });
    await a.waitFor((message) => message.type === "holding" && message.key === seeded.keys[0]);
    await a.waitFor((message) => message.type === "holding" && message.key === seeded.keys[1]);
    // B continues from A's start write. Once B announces its calls, it has read A's live claims
    // and decided what to do about them: that decision must not be to run them.
    const second = await startContinue(b, "live-claims");
    for (const key of seeded.keys) {
      await b.waitFor((message) => message.type === "tool_start" && message.key === key);
    }
    // A keeps the calls past the workers' claimStaleAfterMs while B polls them: only A's
    // heartbeats, written from another process, keep B from taking them for abandoned.
    await sleep(CLAIM_STALE_AFTER_MS + 500);
    await sendCommand(a, { type: "release" });
    const [outcomeA, outcomeB] = [await first(), await second()];

    expect(outcomeB.status).toBe("completed");
    expect(outcomeB.replayed.sort()).toEqual([...seeded.keys].sort());
    // B's start write superseded A, so A's tool step could not commit.
    expect(outcomeA.code).toBe("STORAGE_CONFLICT_001");
    await expectEachCallRanOnce("live-claims", seeded, [outcomeA, outcomeB]);
    const { ledger } = await readThread(store.spec, "live-claims");
    expect(ledger.map((entry) => entry.attempt)).toEqual([1, 1]);
  });

  it(`at the same moment, ${RACE_ROUNDS} times (half of them with a dead run's claim): each call runs once`, async () => {
    for (let index = 0; index < RACE_ROUNDS; index++) {
      const round = rounds++;
      const lag = (index % 3) * 3;
      const started = await Promise.all(
        workers.map((worker, i) =>
          startContinue(worker, `race-${index}`, { round, delayMs: i === index % 2 ? 0 : lag }),
        ),
      );
      const outcomes = await Promise.all(started.map((outcome) => outcome()));
      for (const outcome of outcomes) {
        expect(outcome.status ?? outcome.code, JSON.stringify(outcome)).toMatch(
          /^(completed|STORAGE_CONFLICT_001)$/,
        );
      }
      expect(outcomes.filter((outcome) => outcome.status === "completed")).not.toEqual([]);
      await expectEachCallRanOnce(`race-${index}`, raced[index]!, outcomes);
      // The dead run's claim was taken over once (attempt 2), never run beside it.
      const { ledger } = await readThread(store.spec, `race-${index}`);
      expect(ledger.map((entry) => entry.attempt)).toEqual(index % 2 ? [2, 1] : [1, 1]);
    }
  });
});
