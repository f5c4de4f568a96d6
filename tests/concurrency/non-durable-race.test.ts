/**
 * `durableCheckpointEveryStep: false` with no cache (SQLite; PostgreSQL without Redis): a live
 * run's steps are not in the store, so a second run that starts from the store would ask the
 * model again and run new tool calls beside the live ones. The live run holds a lease; another
 * process's run is refused while it is live, and takes over once it died.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../support/fresh-store.js";
import { STORE_KINDS, durableOnly } from "../support/store-spec.js";
import type { StoreSpec } from "../support/store-spec.js";
import type { WorkerProcess } from "../support/worker-process.js";
import { startsByKey } from "./support/effect-log.js";
import { readThread } from "./support/read-thread.js";
import { expectNothingLostOrRepeated, startTurn } from "./support/turn-race.js";
import type { TurnWorkerParams } from "./support/turn-worker.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";
import { sendCommand } from "./support/worker-commands.js";

const RACE_TIMEOUT_MS = 120_000;
/** Each store without a cache: SQLite has none; PostgreSQL runs here without Redis. */
const UNCACHED = STORE_KINDS.map((kind) => ({
  kind,
  label: kind === "sqlite" ? "SQLite" : "PostgreSQL without Redis",
}));
/** Starting processes on a busy machine is slow; a slow start is not what this suite tests. */
const WORKER_READY_TIMEOUT_MS = 60_000;

describe.each(UNCACHED)("on $label", { timeout: RACE_TIMEOUT_MS }, ({ kind }) => {
  const folder = join(tmpdir(), `tenxgraph-non-durable-${kind}-${randomUUID()}`);
  const logPath = join(folder, "effects.jsonl");
  let spec: StoreSpec;
  const workers: WorkerProcess[] = [];

  beforeAll(() => {
    mkdirSync(folder, { recursive: true });
    spec = durableOnly(freshStore(kind, "non_durable", folder));
  });

  afterAll(async () => {
    await killWorkers(workers);
    await dropStore(spec);
    rmSync(folder, { recursive: true, force: true });
  });

  /** Two fresh turn workers on the store, both running with `durableCheckpointEveryStep: false`. */
  async function twoWorkers(name: string): Promise<[WorkerProcess, WorkerProcess]> {
    const params: TurnWorkerParams[] = ["a", "b"].map((worker) => ({
      store: spec,
      logPath,
      worker: `${name}-${worker}`,
      durableCheckpointEveryStep: false,
    }));
    const started = await startWorkers("./turn-worker.ts", params, WORKER_READY_TIMEOUT_MS);
    workers.push(...started);
    return started as [WorkerProcess, WorkerProcess];
  }

  /** Tool calls that started on `threadId`, per the external log. */
  function effectCount(threadId: string): number {
    return [...startsByKey(logPath, threadId).values()].reduce((sum, n) => sum + n, 0);
  }

  it.each([
    ["continue (invoke(null))", true],
    ["new turn", false],
  ])(
    "a %s while another process's run is inside a tool is refused with THREAD_004 before it writes; no call runs twice",
    async (_, asContinue) => {
      const threadId = `live-${asContinue ? "continue" : "turn"}`;
      const [a, b] = await twoWorkers(threadId);
      const first = await startTurn(a, threadId, { hold: "tool" });
      await a.waitForType("holding");
      const second = await (await startTurn(b, threadId, { continue: asContinue }))();
      await sendCommand(a, { type: "release" });
      const outcomes = [await first(), second];

      expect(second).toMatchObject({ code: "THREAD_004", versions: [] });
      expect(second.message).toMatch(/live run .*durableCheckpointEveryStep: false/);
      expect(outcomes[0]).toMatchObject({ status: "completed", code: null });
      // The model's two calls ran once each: the second process asked the model nothing.
      expect(effectCount(threadId)).toBe(2);
      await expectNothingLostOrRepeated({ spec, logPath }, threadId, outcomes);
    },
  );

  it("a continuation after the live run was SIGKILLed takes over once its lease is stale", async () => {
    const threadId = "killed";
    const [a, b] = await twoWorkers(threadId);
    await startTurn(a, threadId, { hold: "tool" });
    await a.waitForType("holding");
    await a.kill();

    const resumed = await (await startTurn(b, threadId, { continue: true }))();
    expect(resumed).toMatchObject({ status: "completed", code: null });
    const { checkpoint, messages } = await readThread(spec, threadId);
    expect(checkpoint?.status).toBe("completed");
    // The killed run's model step was never written (the documented trade-off of this mode):
    // the model was asked again, and its new calls ran.
    expect(messages.map((message) => message.role)).toEqual([
      ...["user", "assistant", "tool", "tool", "assistant"],
    ]);
  });
});
