/**
 * A run taken over from a dead worker keeps its place in its thread's queue: the run queued
 * behind it (`enqueue`) starts only once it has ended, as it would have without the takeover.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import { RunWorker } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEffects } from "../../support/effect-log.js";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { WorkerProcess } from "../../support/worker-process.js";
import { caller, userMessage } from "../support/http.js";
import type { RunWorkerParams } from "../support/run-worker.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph, type Effect } from "../support/test-graph.js";
import { until } from "../../support/until.js";

const RUN_WORKER = new URL("../support/run-worker.ts", import.meta.url);

describe("takeover and the thread's queue", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-takeover-order-"));
  const spec = freshStore("postgres", "takeover_order", dir);
  const effectLog = join(dir, "effects.jsonl");
  const gate = join(dir, "gate");
  const checkpointer = openStore(spec);
  const graph = buildTestGraph({ effectLog, gateFile: gate }, checkpointer);
  let api: RunsApi;
  let dead: WorkerProcess | null = null;
  let survivor: RunWorker | null = null;

  beforeAll(async () => {
    api = await startRunsApi(graph, "takeover_order", { worker: false });
  }, 60_000);

  afterAll(async () => {
    await dead?.kill();
    await survivor?.drain();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  /** When the run's first and last events were written. */
  async function eventTimes(runId: string): Promise<{ first: Date; last: Date }> {
    const { rows } = await api.store.pool.query<{ first: Date; last: Date }>(
      `SELECT min(created_at) AS first, max(created_at) AS last
         FROM tenxgraph_run_events WHERE run_id = $1`,
      [runId],
    );
    return rows[0]!;
  }

  it("runs the taken-over run before the one enqueued behind it", async () => {
    const call = caller(api.server.url);
    const params: RunWorkerParams = {
      store: spec,
      runsDsn: api.dsn,
      effectLog,
      gateFile: gate,
      workerId: "doomed",
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
    };
    dead = new WorkerProcess(RUN_WORKER, params);
    await dead.waitForType("ready", 60_000);
    const post = async (text: string, extra: Record<string, unknown> = {}) => {
      const posted = await call("POST", "/v1/threads/t-order/runs", {
        messages: [userMessage(text)],
        ...extra,
      });
      expect(posted.status, posted.text).toBe(202);
      return posted.body.data.run_id as string;
    };
    const first = await post("charge order 61");
    await until(
      async () => (await api.store.getRun(first))?.status === "running",
      "the doomed worker to hold the first run",
    );
    const second = await post("charge order 62", { multitask_strategy: "enqueue" });
    const exit = await dead.kill();
    expect(exit.signal).toBe("SIGKILL");

    writeFileSync(gate, "");
    survivor = new RunWorker({
      graph: graph as unknown as CompiledGraph<BaseState>,
      store: api.store,
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
      logger: silentLogger,
    });
    await survivor.start();
    const ended = (runId: string) =>
      until(async () => {
        const run = await api.store.getRun(runId);
        return run && !["pending", "running"].includes(run.status) ? run : null;
      }, `run ${runId} to end`);
    const [firstEnd, secondEnd] = [await ended(first), await ended(second)];
    expect(firstEnd).toMatchObject({ status: "completed", attempts: 2, error: null });
    expect(secondEnd).toMatchObject({ status: "completed", attempts: 1, error: null });
    // The second began only after the first had ended.
    expect((await eventTimes(second)).first.getTime()).toBeGreaterThanOrEqual(
      (await eventTimes(first)).last.getTime(),
    );
    const charges = readEffects<Effect>(effectLog)
      .map((e) => e.line)
      .filter((line) => line.includes("charged order"));
    expect(charges.map((line) => line.match(/charged order (\d+)/)![1])).toEqual(["61", "62"]);
  });
});
