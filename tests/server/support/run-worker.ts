/**
 * A background-run worker in its own process, for tests that SIGKILL, SIGTERM or cut off
 * workers: runs the test support agent from the queue and reports `{ type: "ready", workerId }`.
 * SIGTERM drains (running runs go back to the queue at their next node boundary) and exits 0.
 */
import { jsonLogger } from "@tenxgraph/core";
import { PgRunStore, RunWorker } from "@tenxgraph/server";
import { openStore, type StoreSpec } from "../../support/store-spec.js";
import { report, workerParams } from "../../support/worker-process.js";
import { buildTestGraph, type TestGraphParams } from "./test-graph.js";
import { buildVersionedGraph, type VersionedGraphParams } from "./versioned-graph.js";

/** Params of a run worker process. */
export interface RunWorkerParams
  extends TestGraphParams, Partial<Pick<VersionedGraphParams, "release" | "approveCharges">> {
  store: StoreSpec;
  /** The PostgreSQL database of the runs and their queue. */
  runsDsn: string;
  /** `host:pid` unless set (a test's hosts share one kernel's host name). */
  workerId?: string;
  concurrency?: number;
  heartbeatMs?: number;
  staleAfterMs?: number;
  pollIntervalMs?: number;
}

const params = workerParams<RunWorkerParams>();
const checkpointer = openStore(params.store);
// Warnings and errors on stderr, which a failing test quotes: the graph's (a tool call found IN
// DOUBT, with its ledger key) and the worker's.
// A release (a rolling deploy's test) runs that release of the agent; otherwise the usual one.
const graph =
  params.release === undefined
    ? buildTestGraph(params, checkpointer, jsonLogger("warn"))
    : buildVersionedGraph({ ...params, release: params.release }, checkpointer, jsonLogger("warn"));
const store = new PgRunStore({ postgresDsn: params.runsDsn });
const worker = new RunWorker({
  graph,
  store,
  ...(params.workerId === undefined ? {} : { workerId: params.workerId }),
  concurrency: params.concurrency ?? 1,
  heartbeatMs: params.heartbeatMs ?? 250,
  staleAfterMs: params.staleAfterMs ?? 1000,
  pollIntervalMs: params.pollIntervalMs ?? 100,
  logger: jsonLogger("warn"),
});
await worker.start();
await report({ type: "ready", workerId: worker.workerId, pid: process.pid });
process.once("SIGTERM", () => {
  void worker
    .drain()
    .then(() => store.close())
    .then(() => checkpointer.close())
    .then(() => process.exit(0));
});
