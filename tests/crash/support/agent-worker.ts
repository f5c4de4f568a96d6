/**
 * A worker process for the crash suite: builds the support agent on the store named in its
 * params (a SQLite file, or a PostgreSQL schema behind Redis), runs one `invoke` or `stream`,
 * and reports to the parent over IPC what it did. When its params say so, it SIGKILLs itself at
 * a named fault point (a real crash: no cleanup, no flush), or hangs in a tool until the parent
 * kills it.
 */
import type { Checkpointer, FaultContext } from "@tenxgraph/core";
import { FaultPoints } from "@tenxgraph/core/testing";
import { openStore } from "../../support/store-spec.js";
import { report, workerParams } from "../../support/worker-process.js";
import type { AgentParams } from "./agent-params.js";
import { runAgent } from "./run-agent.js";
import { reportingLogger, storeLogger } from "./reporting-logger.js";

/** A finished worker gets this long to end by itself once its store is closed. */
const EXIT_AFTER_CLOSE_MS = 10_000;

// A worker whose test is gone (the parent died or failed) has nothing left to do.
const leaveWithParent = () => process.exit(1);
process.on("disconnect", leaveWithParent);

const params = workerParams<AgentParams>();
const checkpointer = openStore(params.store, { logger: storeLogger() });
// The metrics SDK costs a tenth of a second per start: loaded only when the test reads it.
const meter = params.metrics === false ? null : (await import("./worker-meter.js")).workerMeter();
try {
  const outcome = await runAgent(params, {
    checkpointer,
    faultPoints: faultPoints(params, checkpointer),
    logger: reportingLogger(),
    meter: meter?.meter,
    onHang: (tool) => void report({ type: "hanging", tool }),
  });
  await report({ type: "done", ...outcome, metrics: (await meter?.sums()) ?? null });
} catch (error) {
  const code = (error as { code?: unknown }).code ?? null;
  await report({ type: "failed", code, message: String(error) });
}
await checkpointer.close();
if (params.stayAlive) {
  await report({ type: "idle" });
  setInterval(() => {}, 1_000); // alive, doing nothing, until the parent's SIGKILL
} else {
  exitWhenIdle();
}

/**
 * Ends the process the way a well-behaved app ends, by running out of work, not by
 * `process.exit`: a closed store must leave no pool, socket or timer behind. Whatever still
 * runs after a while is named on stderr, which the parent quotes, and fails the worker.
 */
function exitWhenIdle(): void {
  process.off("disconnect", leaveWithParent);
  process.disconnect();
  const leak = setTimeout(() => {
    const resources = process.getActiveResourcesInfo().join(", ");
    process.stderr.write(`still running ${EXIT_AFTER_CLOSE_MS} ms after close: ${resources}\n`);
    process.exit(70);
  }, EXIT_AFTER_CLOSE_MS);
  leak.unref();
}

/**
 * Reporters first (FaultPoints fires armings in the order they were armed), so the parent
 * hears of a point before the kill armed on it fires.
 */
function faultPoints(params: AgentParams, store: Checkpointer): FaultPoints {
  const where = (at: FaultContext) => ({ tool: at.toolName ?? null, key: at.key ?? null });
  const faults = new FaultPoints()
    .arm("tool.after_return", (at) => report({ type: "returned", ...where(at) }))
    .arm("ledger.after_record", (at) => report({ type: "recorded", ...where(at) }))
    .arm("step.after_write", async (at) => {
      // The run holds the thread, so what is stored now is what this write committed.
      const checkpoint = await store.getCheckpoint(at.threadId);
      await report({
        type: "write",
        version: checkpoint?.version ?? null,
        status: checkpoint?.status ?? null,
        currentNode: checkpoint?.currentNode ?? null,
      });
    });
  const kill = params.kill;
  if (!kill) return faults;
  let seen = 0;
  return faults.arm(
    kill.point,
    async (at) => {
      await report({ type: "killing", point: kill.point, node: at.node, ...where(at) });
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => {}); // the signal may land a moment later: do nothing until then
    },
    {
      when: (at) =>
        (kill.tool === undefined || at.toolName === kill.tool) && ++seen === (kill.hit ?? 1),
    },
  );
}
