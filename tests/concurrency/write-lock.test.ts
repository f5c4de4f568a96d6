import { setTimeout as sleep } from "node:timers/promises";
import { Message } from "@tenxgraph/core";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkerProcess } from "../support/worker-process.js";
import { agentGraph } from "./support/agent-graph.js";
import type { LockHolderParams } from "./support/lock-holder-worker.js";
import { readThread } from "./support/read-thread.js";
import { createTempStore } from "./support/temp-store.js";
import type { TurnOutcome, TurnWorkerParams } from "./support/turn-worker.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";
import { request } from "./support/worker-commands.js";

const store = createTempStore("write-lock");
let holder: WorkerProcess;
let writer: WorkerProcess;

beforeAll(async () => {
  // The schema exists before the holder opens the file with no migrations of its own.
  const own = new SqliteCheckpointer({ path: store.dbPath });
  await own.setup();
  await own.close();
  const holderParams: LockHolderParams = { dbPath: store.dbPath };
  const writerParams: TurnWorkerParams = { store: store.spec, logPath: store.logPath, worker: "w" };
  [[holder], [writer]] = (await Promise.all([
    startWorkers("./lock-holder-worker.ts", [holderParams]),
    startWorkers("./turn-worker.ts", [writerParams]),
  ])) as [[WorkerProcess], [WorkerProcess]];
});

afterAll(async () => {
  await killWorkers([holder, writer]);
  store.remove();
});

describe("another process holds the SQLite write lock", () => {
  it("a run in a third process waits for it (busyTimeoutMs) and completes once it is released", async () => {
    await request(holder, { type: "lock" }, "locked");
    const turn = request(
      writer,
      { type: "turn", threadId: "waits", round: 0, delayMs: 0, hold: null },
      "turn",
    );
    // Time for the writer to reach its first write and wait on the lock (not asserted: if it
    // got there later, it waits all the same).
    await sleep(300);
    // While the lock is held, nothing can have been committed: the writer has not finished.
    expect(writer.messages.filter((message) => message.type === "turn")).toEqual([]);
    await request(holder, { type: "release" }, "released");

    const outcome = (await turn) as unknown as TurnOutcome;
    expect(outcome).toMatchObject({ status: "completed", code: null });
    expect((await readThread(store.spec, "waits")).checkpoint?.status).toBe("completed");
  });

  it("with a tiny busyTimeoutMs a run fails with STORAGE_FAILURE_001 naming the lock, and writes nothing", async () => {
    const impatient = new SqliteCheckpointer({ path: store.dbPath, busyTimeoutMs: 1 });
    await impatient.setup();
    const app = agentGraph({ checkpointer: impatient, tools: [], turns: [] });
    await request(holder, { type: "lock" }, "locked");
    try {
      // Reads do not wait for the writer (WAL): the state of another thread is there.
      expect((await app.getState({ threadId: "waits" }))?.status).toBe("completed");
      const run = app.invoke({ messages: [Message.user("hi")] }, { threadId: "refused" });
      await expect(run).rejects.toMatchObject({
        code: "STORAGE_FAILURE_001",
        message: expect.stringContaining(
          `'${store.dbPath}' stayed locked by another connection for longer than busyTimeoutMs`,
        ),
      });
    } finally {
      await request(holder, { type: "release" }, "released");
      await impatient.close();
    }
    expect((await readThread(store.spec, "refused")).checkpoint).toBeNull();
  });
});
