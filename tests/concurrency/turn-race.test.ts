import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkerProcess } from "../support/worker-process.js";
import { readThread } from "./support/read-thread.js";
import { createTempStore } from "./support/temp-store.js";
import { expectNothingLostOrRepeated, raceTurns, startTurn } from "./support/turn-race.js";
import type { TurnWorkerParams } from "./support/turn-worker.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";
import { sendCommand } from "./support/worker-commands.js";

const store = createTempStore("turn-race");
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  const params: TurnWorkerParams[] = ["w0", "w1"].map((worker) => ({
    store: store.spec,
    logPath: store.logPath,
    worker,
  }));
  workers = await startWorkers("./turn-worker.ts", params);
});

afterAll(async () => {
  await killWorkers(workers);
  store.remove();
});

describe("two processes run turns on one thread", () => {
  it("at the same moment, 20 times: they serialise or one is refused; no update is lost, no call runs twice", async () => {
    const outcomes = await raceTurns(workers, "race", 20);
    expect((await readThread(store.spec, "race")).checkpoint?.status).toBe("completed");
    await expectNothingLostOrRepeated(store, "race", outcomes);
  });

  it("a turn started while another process's run is inside a tool call is refused with THREAD_003 before it writes", async () => {
    const [a, b] = workers as [WorkerProcess, WorkerProcess];
    const first = await startTurn(a, "busy-tool", { hold: "tool" });
    await a.waitForType("holding");
    const second = await (await startTurn(b, "busy-tool"))();
    await sendCommand(a, { type: "release" });
    const outcomes = [await first(), second];

    expect(outcomes[0]!.status).toBe("completed");
    await expectNothingLostOrRepeated(store, "busy-tool", outcomes);
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
    await expectNothingLostOrRepeated(store, "between-steps", [superseded, second]);
    const { messages } = await readThread(store.spec, "between-steps");
    // A's tool results are in the transcript before B's input: B's turn was built on them.
    expect(messages.map((message) => message.role)).toEqual([
      ...["user", "assistant", "tool", "tool"],
      ...["user", "assistant", "tool", "tool", "assistant"],
    ]);
  });
});
