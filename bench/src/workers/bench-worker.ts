/**
 * A background-run worker in a process of its own, for the "many workers" bench: a `RunWorker`
 * (its timings are the library's defaults unless the params set them) on a one-node graph whose
 * node reports `{ type: "node_start", threadId, at: Date.now() }` to the parent when it starts,
 * then sleeps `nodeMs` and answers. Reports `{ type: "ready" }` once connected and migrated;
 * with `paused` it starts taking runs only when the parent sends `{ type: "go" }`, and
 * `{ type: "pause" }` stops taking them (it drains its worker and readies a fresh one for the
 * next "go", then reports `{ type: "paused" }`): a throughput round warms the process up on
 * runs of its own, then fills the queue while the workers are paused. SIGTERM drains and exits
 * 0; losing the parent exits at once.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { END, Message, StateGraph, jsonLogger } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { PgRunStore, RunWorker } from "@tenxgraph/server";

/** What the parent passes in TENXGRAPH_BENCH_WORKER_PARAMS. */
export interface BenchWorkerParams {
  dsn: string;
  workerId: string;
  /** How long the node works before answering (0: at once). */
  nodeMs: number;
  concurrency: number;
  /** Wait for `{ type: "go" }` before taking runs (throughput: the queue is filled first). */
  paused: boolean;
}

const params = JSON.parse(process.env.TENXGRAPH_BENCH_WORKER_PARAMS ?? "{}") as BenchWorkerParams;
const logger = jsonLogger("warn");

function send(message: Record<string, unknown>): void {
  process.send?.(message);
}

const checkpointer = new PgCheckpointer({ postgresDsn: params.dsn, logger });
const graph = new StateGraph()
  .addNode("MAIN", async (_state, ctx) => {
    send({ type: "node_start", threadId: ctx.threadId, at: Date.now() });
    if (params.nodeMs > 0) await sleep(params.nodeMs);
    return Message.assistant("ok");
  })
  .addEdge("MAIN", END)
  .setEntryPoint("MAIN")
  .compile({ checkpointer, logger });
const store = new PgRunStore({ postgresDsn: params.dsn });
const newWorker = () =>
  new RunWorker({
    graph,
    store,
    workerId: params.workerId,
    concurrency: params.concurrency,
    logger,
  });
let worker = newWorker();

// Connected and migrated before "ready", so neither is timed.
await checkpointer.setup();
await store.setup();
process.on("disconnect", () => process.exit(1));
process.once("SIGTERM", () => {
  void worker
    .drain()
    .then(() => store.close())
    .then(() => checkpointer.close())
    .then(() => process.exit(0));
});
if (params.paused) {
  process.on("message", (message: { type?: string }) => {
    if (message.type === "go") void worker.start().then(() => send({ type: "started" }));
    if (message.type === "pause") {
      void worker.drain().then(() => {
        worker = newWorker();
        send({ type: "paused" });
      });
    }
  });
} else {
  await worker.start();
}
send({ type: "ready", workerId: worker.workerId, pid: process.pid });
