/**
 * A child process that runs a two-task entrypoint on a SQLite file: `reserve` (recorded), then
 * `charge`. With `hang`, `charge` writes its effect (the card is charged), says so, and never
 * returns, so the test SIGKILLs it between the charge and its record. Without, it runs the
 * entrypoint to its end (`invoke(null)`: continue the run the killed process left) and reports
 * the result, or the code it failed with.
 */
import { isTenxgraphError } from "@tenxgraph/core";
import { entrypoint, task, type TaskInDoubtPolicy } from "@tenxgraph/core/func";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { appendEffect, readEffects } from "../../support/effect-log.js";
import { report, workerParams } from "../../support/worker-process.js";

/** What the test hands the worker. */
export interface FuncWorkerParams {
  dbPath: string;
  effectsPath: string;
  threadId: string;
  /** Hang inside `charge` after its effect, for the test to SIGKILL. */
  hang: boolean;
  policy: "retry" | "fail" | "reconcile";
}

/** One line of the outside world's log: a task acted. */
export interface FuncEffect {
  task: "reserve" | "charge";
  attempt: number;
}

const params = workerParams<FuncWorkerParams>();
const checkpointer = new SqliteCheckpointer({ path: params.dbPath });

const reserve = task("reserve", (order: string, ctx) => {
  appendEffect(params.effectsPath, { task: "reserve", attempt: ctx.attempt });
  return `reserved ${order}`;
});

/** `reconcile` asks the outside world (the log) whether the charge happened. */
const policies: Record<FuncWorkerParams["policy"], TaskInDoubtPolicy<string>> = {
  retry: "retry",
  fail: "fail",
  reconcile: {
    reconcile: (order) =>
      readEffects<FuncEffect>(params.effectsPath).some((e) => e.task === "charge")
        ? `charged ${order} (found by reconcile)`
        : undefined,
  },
};

const charge = task(
  "charge",
  async (order: string, ctx) => {
    appendEffect(params.effectsPath, { task: "charge", attempt: ctx.attempt });
    if (params.hang) {
      await report({ type: "charging" });
      await new Promise(() => {}); // killed here: charged, never recorded
    }
    return `charged ${order}`;
  },
  { onInDoubt: policies[params.policy] },
);

const checkout = entrypoint(
  { name: "checkout", checkpointer, claimStaleAfterMs: 400, stopPollIntervalMs: 100 },
  async (order: string) => [await reserve(order), await charge(order)],
);

try {
  const result = params.hang
    ? await checkout.invoke("order-1", { threadId: params.threadId })
    : await checkout.invoke(null, { threadId: params.threadId });
  await report({ type: "done", status: result.status, output: result.output });
} catch (error) {
  await report({ type: "failed", code: isTenxgraphError(error) ? error.code : String(error) });
} finally {
  await checkpointer.close();
}
