/**
 * SIGKILL inside an entrypoint, after its first task was recorded and while its second runs
 * (its effect written, its result not): a fresh process continues the run. The first task is
 * replayed from the ledger (it acted once, per the outside world's log); the second is in doubt
 * and its `onInDoubt` policy decides.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { describe, expect, it } from "vitest";
import { readEffects } from "../support/effect-log.js";
import { WorkerProcess } from "../support/worker-process.js";
import type { FuncEffect, FuncWorkerParams } from "./support/func-worker.js";

const WORKER = new URL("./support/func-worker.ts", import.meta.url);

/** Runs the entrypoint in a child, kills it inside `charge`, and continues in a fresh child. */
async function crashThenContinue(policy: FuncWorkerParams["policy"]) {
  const dir = mkdtempSync(join(tmpdir(), `tenxgraph-func-${policy}-`));
  const base = {
    dbPath: join(dir, "threads.db"),
    effectsPath: join(dir, "effects.jsonl"),
    threadId: "checkout-1",
    policy,
  };
  try {
    const doomed = new WorkerProcess(WORKER, { ...base, hang: true });
    await doomed.waitForType("charging", 30_000);
    expect(await doomed.kill()).toMatchObject({ signal: "SIGKILL" });
    const killedLedger = await readLedger(base.dbPath, base.threadId);

    const fresh = new WorkerProcess(WORKER, { ...base, hang: false });
    const outcome = await fresh.waitFor((m) => m.type === "done" || m.type === "failed", 30_000);
    await fresh.exited;
    return {
      killedLedger,
      outcome,
      ledger: await readLedger(base.dbPath, base.threadId),
      effects: readEffects<FuncEffect>(base.effectsPath),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function readLedger(path: string, threadId: string) {
  const store = new SqliteCheckpointer({ path });
  try {
    const entries = await store.listCalls(threadId);
    return entries.map((e) => ({ tool: e.toolName, status: e.status, attempt: e.attempt }));
  } finally {
    await store.close();
  }
}

describe(
  "an entrypoint killed between its tasks (SQLite, real processes)",
  { timeout: 90_000 },
  () => {
    it('"retry": reserve replays, charge is in doubt and runs again as attempt 2', async () => {
      const { killedLedger, outcome, ledger, effects } = await crashThenContinue("retry");

      expect(killedLedger).toEqual([
        { tool: "reserve", status: "completed", attempt: 1 },
        { tool: "charge", status: "started", attempt: 1 },
      ]);
      expect(outcome).toMatchObject({
        type: "done",
        status: "completed",
        output: ["reserved order-1", "charged order-1"],
      });
      expect(effects).toEqual([
        { task: "reserve", attempt: 1 },
        { task: "charge", attempt: 1 },
        { task: "charge", attempt: 2 },
      ]);
      expect(ledger).toEqual([
        { tool: "reserve", status: "completed", attempt: 1 },
        { tool: "charge", status: "completed", attempt: 2 },
      ]);
    });

    it('"fail": charge is not run again and the entrypoint fails with FUNC_003', async () => {
      const { outcome, ledger, effects } = await crashThenContinue("fail");

      expect(outcome).toMatchObject({ type: "failed", code: "FUNC_003" });
      expect(effects).toEqual([
        { task: "reserve", attempt: 1 },
        { task: "charge", attempt: 1 },
      ]);
      expect(ledger).toEqual([
        { tool: "reserve", status: "completed", attempt: 1 },
        { tool: "charge", status: "completed", attempt: 2 },
      ]);
    });

    it("reconcile: the outside world says it was charged, so its answer is the result", async () => {
      const { outcome, effects } = await crashThenContinue("reconcile");

      expect(outcome).toMatchObject({
        type: "done",
        output: ["reserved order-1", "charged order-1 (found by reconcile)"],
      });
      expect(effects.filter((e) => e.task === "charge")).toHaveLength(1);
      expect(effects.filter((e) => e.task === "reserve")).toHaveLength(1);
    });
  },
);
