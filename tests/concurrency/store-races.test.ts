import { afterAll, beforeAll, describe, it } from "vitest";
import type { WorkerProcess } from "../support/worker-process.js";
import { raceClaims, raceCounter } from "./support/store-race.js";
import type { StoreWorkerParams } from "./support/store-worker.js";
import { createTempStore } from "./support/temp-store.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";

const WORKERS = 4;
const store = createTempStore("store-races");
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  const params: StoreWorkerParams[] = Array.from({ length: WORKERS }, (_, worker) => ({
    store: store.spec,
    worker,
  }));
  workers = await startWorkers("./store-worker.ts", params);
});

afterAll(async () => {
  await killWorkers(workers);
  store.remove();
});

describe("several processes write one thread through SqliteCheckpointer", () => {
  it("compare-and-swap increments retried on STORAGE_CONFLICT_001: no update is lost, each version once", async () => {
    await raceCounter(workers, store.spec, "counter", 50);
  });

  it("ledger claims of the same keys: one winner per key, takeovers too, and the fence keeps zombies out", async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `m-${i}:call_1`);
    await raceClaims(workers, store.spec, "claims", keys);
  });
});
