import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkerProcess } from "../support/worker-process.js";
import { startsByKey } from "./support/effect-log.js";
import { answeredKeys, duplicates, readThread, toolCallKeys } from "./support/read-thread.js";
import { createTempStore } from "./support/temp-store.js";
import type { HoldPoint, TurnOutcome, TurnWorkerParams } from "./support/turn-worker.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";
import { sendCommand } from "./support/worker-commands.js";

const store = createTempStore("turn-race");
let workers: WorkerProcess[] = [];
let rounds = 0;

beforeAll(async () => {
  const params: TurnWorkerParams[] = ["w0", "w1"].map((worker) => ({
    dbPath: store.dbPath,
    logPath: store.logPath,
    worker,
  }));
  workers = await startWorkers("./turn-worker.ts", params);
});

afterAll(async () => {
  await killWorkers(workers);
  store.remove();
});

/** Tells `worker` to run a turn; returns a function awaiting its outcome. Rounds are unique per file. */
async function startTurn(
  worker: WorkerProcess,
  threadId: string,
  options: { delayMs?: number; hold?: HoldPoint; round?: number } = {},
): Promise<() => Promise<TurnOutcome>> {
  const round = options.round ?? rounds++;
  const { delayMs = 0, hold = null } = options;
  await sendCommand(worker, { type: "turn", threadId, round, delayMs, hold });
  return async () =>
    (await worker.waitFor(
      (message) => message.type === "turn" && message.round === round,
    )) as unknown as TurnOutcome;
}

/**
 * Both workers get `turn` in the same tick. The later one starts 0 to 8 ms after the other
 * (alternating sides), so over the rounds its start lands before, during and after the first
 * run's writes: the interleavings differ, the invariants must not.
 */
async function raceRound(threadId: string, index: number): Promise<TurnOutcome[]> {
  const round = rounds++;
  const lag = (index % 5) * 2;
  const outcomes = await Promise.all(
    workers.map((worker, i) =>
      startTurn(worker, threadId, { round, delayMs: i === index % 2 ? 0 : lag }),
    ),
  );
  return Promise.all(outcomes.map((outcome) => outcome()));
}

/**
 * What must hold however the runs interleaved: every committed write has its own version and
 * none is missing; the transcript is exactly the messages the runs committed, each once; every
 * tool call in it ran exactly once (per the external log) and was answered exactly once; no
 * call ran that the transcript does not show.
 */
async function expectNothingLostOrRepeated(threadId: string, outcomes: TurnOutcome[]) {
  const { checkpoint, messages } = await readThread(store.dbPath, threadId);
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

describe("two processes run turns on one thread", () => {
  it("at the same moment, 20 times: they serialise or one is refused; no update is lost, no call runs twice", async () => {
    const outcomes: TurnOutcome[] = [];
    for (let index = 0; index < 20; index++) {
      const pair = await raceRound("race", index);
      outcomes.push(...pair);
      // A run completes or is refused before it commits a write that conflicts. THREAD_003 is
      // the refusal of a turn landing while the other run waits for its tools (next test).
      for (const outcome of pair) {
        expect(outcome.status ?? outcome.code, JSON.stringify(outcome)).toMatch(
          /^(completed|STORAGE_CONFLICT_001|THREAD_003)$/,
        );
      }
      // Of two racing runs, a refusal needs the other's commit: at least one completes.
      expect(pair.filter((outcome) => outcome.status === "completed")).not.toEqual([]);
    }
    expect((await readThread(store.dbPath, "race")).checkpoint?.status).toBe("completed");
    await expectNothingLostOrRepeated("race", outcomes);
  });

  it("a turn started while another process's run is inside a tool call is refused with THREAD_003 before it writes", async () => {
    const [a, b] = workers as [WorkerProcess, WorkerProcess];
    const first = await startTurn(a, "busy-tool", { hold: "tool" });
    await a.waitForType("holding");
    const second = await (await startTurn(b, "busy-tool"))();
    await sendCommand(a, { type: "release" });
    const outcomes = [await first(), second];

    expect(outcomes[0]!.status).toBe("completed");
    await expectNothingLostOrRepeated("busy-tool", outcomes);
    // New input while the model's tool calls are unanswered is refused before any write. The
    // store cannot tell a live run in another process from a crashed one, so the message names
    // both (wait, or continue: continuing is safe, the live run's claims are waited on).
    expect(second.versions).toEqual([]);
    expect(second.code).toBe("THREAD_003");
    expect(second.message).toMatch(/a run is answering them now, perhaps in another process/);
  });

  it("a turn that lands between another process's steps wins; the other rejects with STORAGE_CONFLICT_001 and its committed steps stay", async () => {
    const [a, b] = workers as [WorkerProcess, WorkerProcess];
    // A has committed its input, its tool calls and their results, and holds its last reply.
    const first = await startTurn(a, "between-steps", { hold: "reply" });
    await a.waitFor((message) => message.type === "holding" && message.at === "reply");
    const second = await (await startTurn(b, "between-steps"))();
    await sendCommand(a, { type: "release" });
    const superseded = await first();

    expect(second.status).toBe("completed");
    expect(superseded.code).toBe("STORAGE_CONFLICT_001");
    await expectNothingLostOrRepeated("between-steps", [superseded, second]);
    const { messages } = await readThread(store.dbPath, "between-steps");
    // A's tool results are in the transcript before B's input: B's turn was built on them.
    expect(messages.map((message) => message.role)).toEqual([
      ...["user", "assistant", "tool", "tool"],
      ...["user", "assistant", "tool", "tool", "assistant"],
    ]);
  });
});
