/**
 * A worker process for the crash suite: builds the support agent on the store named in its
 * params (a SQLite file, or a PostgreSQL schema behind Redis), runs one `invoke` or `stream`,
 * and reports to the parent over IPC what it did. When its params say so, it SIGKILLs itself at
 * a named fault point (a real crash: no cleanup, no flush), or hangs in a tool until the parent
 * kills it.
 *
 * Started with `{ awaitParams: true }` (a warm worker), it loads everything, reports `warm`, and
 * serves runs one after another: each from a `params` message, reported `served` once its store
 * is closed. The chaos run keeps such processes ready, and reuses those that were not killed,
 * so that its time goes to runs and kills rather than to loading Node.js and the packages.
 */
import type { FaultContext } from "@tenxgraph/core/testing";
import { FaultPoints } from "@tenxgraph/core/testing";
import { openStore } from "../../support/store-spec.js";
import { report, workerParams, type WorkerMessage } from "../../support/worker-process.js";
import type { AgentParams } from "./agent-params.js";
import { reportingWrites } from "./reporting-writes.js";
import { runAgent } from "./run-agent.js";
import { reportingLogger, storeLogger } from "./reporting-logger.js";
import { version1Key, version1Name } from "./graph-versions.js";

/** A finished worker gets this long to end by itself once its store is closed. */
const EXIT_AFTER_CLOSE_MS = 10_000;

// A worker whose test is gone (the parent died or failed) has nothing left to do.
const leaveWithParent = () => process.exit(1);
process.on("disconnect", leaveWithParent);

const given = workerParams<AgentParams | { awaitParams: true }>();
if ("awaitParams" in given) {
  // Listening before saying so: the parent answers `warm` and `served` with the next params.
  let next = nextParams();
  await report({ type: "warm" });
  for (;;) {
    await runOnce(await next);
    next = nextParams();
    await report({ type: "served" });
  }
}
const params = given;
await runOnce(params);
if (params.stayAlive) {
  await report({ type: "idle" });
  setInterval(() => {}, 1_000); // alive, doing nothing, until the parent's SIGKILL
} else {
  exitWhenIdle();
}

/** Runs the agent once on its own store connection, reports how it ended, closes the store. */
async function runOnce(params: AgentParams): Promise<void> {
  const checkpointer = reportingWrites(openStore(params.store, { logger: storeLogger() }));
  // The metrics SDK costs a tenth of a second per start: loaded only when the test reads it.
  const meter = params.metrics === false ? null : (await import("./worker-meter.js")).workerMeter();
  try {
    const outcome = await runAgent(params, {
      checkpointer,
      faultPoints: faultPoints(params),
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
}

/** A warm worker's next params, from the parent's `params` message. */
function nextParams(): Promise<AgentParams> {
  return new Promise((resolve) => {
    process.once("message", (message: WorkerMessage) => resolve(message.params as AgentParams));
  });
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
 * hears of a point before the kill armed on it fires. Committed writes are reported by the
 * store itself (reporting-writes.ts), before `step.after_write` fires.
 */
function faultPoints(params: AgentParams): FaultPoints {
  // Reported, and aimed at, by version 1's names: a plan names charge_card in either version.
  const toolOf = (at: FaultContext) => (at.toolName ? version1Name(at.toolName) : null);
  const where = (at: FaultContext) => ({
    tool: toolOf(at),
    key: at.key ? version1Key(at.key) : null,
  });
  const faults = new FaultPoints()
    .arm("tool.after_return", (at) => report({ type: "returned", ...where(at) }))
    .arm("ledger.after_record", (at) => report({ type: "recorded", ...where(at) }));
  if (params.pause) pauseAt(faults, params.pause);
  const kill = params.kill;
  if (!kill) return faults;
  let seen = 0;
  return faults.arm(
    kill.point,
    async (at) => {
      await report({
        type: "killing",
        point: kill.point,
        thread: at.threadId,
        node: at.node,
        ...where(at),
      });
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => {}); // the signal may land a moment later: do nothing until then
    },
    {
      when: (at) =>
        (kill.tool === undefined || toolOf(at) === kill.tool) && ++seen === (kill.hit ?? 1),
    },
  );
}

/** Arms `pause`: the run stops there for good, and the parent hears so and kills the process. */
function pauseAt(faults: FaultPoints, pause: NonNullable<AgentParams["pause"]>): void {
  let seen = 0;
  faults.arm(
    pause.point,
    async (at) => {
      await report({ type: "paused", point: pause.point, node: at.node });
      await new Promise(() => {}); // nothing more happens in this run: the parent's SIGKILL ends it
    },
    { when: () => ++seen === (pause.hit ?? 1) },
  );
}
