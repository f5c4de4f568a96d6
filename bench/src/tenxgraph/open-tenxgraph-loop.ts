import { InMemoryCheckpointer } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import type { Loop, StoreSpec } from "../loop.js";
import { toolCallsPerRun, type Workload } from "../workload.js";
import { openPgStore } from "./pg-stores.js";
import { buildApp, runOnce } from "./react-loop.js";
import { sdkTracer } from "./sdk-tracer.js";
import { timeCheckpointer, type StoreTimes } from "./time-checkpointer.js";

const LEDGER_METHODS = ["getCalls", "claimCalls", "completeCall", "heartbeatCalls"];

/**
 * tenxgraph's ReAct loop on the store `spec` names, set up. On a durable store each run also
 * reports the time spent inside the store's methods: until each call returned on SQLite
 * (better-sqlite3 does its work before the promise is returned), until its promise settled on
 * PostgreSQL (round trips too). The in-memory store is not wrapped: the engine alone is what it
 * times, and a proxy on every store call would add to it.
 */
export async function openTenxgraphLoop(workload: Workload, spec: StoreSpec): Promise<Loop> {
  const checkpointer = openCheckpointer(spec);
  await checkpointer.setup();
  if (spec.kind === "memory") {
    const app = buildApp(workload, checkpointer, spec.sdk ? sdkTracer() : undefined);
    return {
      runtime: "tenxgraph",
      run: (threadId) => runOnce(app, workload, threadId),
      close: () => checkpointer.close(),
    };
  }
  const { store, times } = timeCheckpointer(
    checkpointer,
    spec.kind === "postgres" ? "settled" : "returned",
  );
  const app = buildApp(workload, store);
  return {
    runtime: "tenxgraph",
    async run(threadId) {
      times.clear();
      const run = await runOnce(app, workload, threadId);
      return { ...run, store: storeTimesPerRun(times, run.steps, workload) };
    },
    // Its connection is private; the setting it was given is the one it applies.
    ...(spec.kind === "sqlite"
      ? { connectionSettings: () => ({ synchronous: spec.synchronous }) }
      : {}),
    close: () => checkpointer.close(),
  };
}

function openCheckpointer(spec: StoreSpec): Checkpointer {
  switch (spec.kind) {
    case "memory":
      return new InMemoryCheckpointer();
    case "sqlite":
      return new SqliteCheckpointer({ path: spec.path, synchronous: spec.synchronous });
    case "postgres":
      return openPgStore(
        spec.servers,
        spec.withRedis ? "postgres+redis" : "postgres",
        spec.schema,
        spec.warnings,
      );
  }
}

/** One run's store times, per write, per tool call and per step. */
function storeTimesPerRun(times: StoreTimes, steps: number, workload: Workload) {
  const ms = (names: string[]) => names.reduce((sum, n) => sum + (times.get(n)?.ms ?? 0), 0);
  const write = times.get("putCheckpoint");
  return {
    msPerWrite: write ? write.ms / write.calls : 0,
    ledgerMsPerToolCall: ms(LEDGER_METHODS) / Math.max(1, toolCallsPerRun(workload)),
    storeMsPerStep: ms([...times.keys()]) / steps,
  };
}
