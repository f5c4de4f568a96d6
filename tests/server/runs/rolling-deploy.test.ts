/**
 * A rolling deploy of background-run workers, in real processes on one PostgreSQL: release 1
 * (`charge_card`) and release 2 (`charge_payment`, an AUDIT node, a migration from 1) share the
 * queue. A worker killed mid tool node under 1 is finished by 2 with one charge; an interrupt
 * paused under 1 is answered under 2; a release that cannot continue a thread declines its run,
 * which waits intact for one that can; both releases at once lose no run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { RunningServer } from "@tenxgraph/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readEffects } from "../../support/effect-log.js";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { WorkerProcess } from "../../support/worker-process.js";
import { caller, userMessage } from "../support/http.js";
import type { RunWorkerParams } from "../support/run-worker.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";
import type { Effect } from "../support/test-graph.js";
import { buildVersionedGraph, type Release } from "../support/versioned-graph.js";
import { silentLogger } from "@tenxgraph/core";

const RUN_WORKER = new URL("../support/run-worker.ts", import.meta.url);
/** How long send_receipt takes: long enough to SIGKILL a worker while it runs. */
const MAILER_DELAY_MS = 1500;

interface RunView {
  status: string;
  worker_id: string | null;
  attempts: number;
  error?: { code: string; message: string };
}

describe("rolling deploy: workers of two releases on one queue", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-rolling-"));
  const spec = freshStore("postgres", "rolling_deploy", dir);
  const effectLog = join(dir, "effects.jsonl");
  const checkpointer = openStore(spec);
  const started: WorkerProcess[] = [];
  let api: RunsApi;
  let runsDsn: string;
  let server: RunningServer;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    // The API serves release 2; no worker in this process: the workers are the processes.
    const graph = buildVersionedGraph({ effectLog, release: 2 }, checkpointer, silentLogger);
    api = await startRunsApi(graph, "rolling_deploy", { worker: false });
    ({ dsn: runsDsn, server } = api);
    call = caller(server.url);
  }, 60_000);

  // Each case starts with no worker: one left from a failed case would take its runs.
  afterEach(() => stopAll());

  afterAll(async () => {
    await Promise.all(started.map((worker) => worker.kill()));
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  async function startWorker(
    release: Release,
    options: { approveCharges?: boolean } = {},
  ): Promise<WorkerProcess> {
    const params: RunWorkerParams = {
      store: spec,
      runsDsn,
      effectLog,
      mailerDelayMs: MAILER_DELAY_MS,
      workerId: `r${String(release)}-${started.length + 1}`,
      release,
      concurrency: 2,
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
      ...options,
    };
    const worker = new WorkerProcess(RUN_WORKER, params);
    started.push(worker);
    await worker.waitForType("ready", 60_000);
    return worker;
  }

  async function postRun(threadId: string, body: object): Promise<string> {
    const posted = await call("POST", `/v1/threads/${threadId}/runs`, body);
    expect(posted.status, posted.text).toBe(202);
    return posted.body.data.run_id as string;
  }

  async function getRun(threadId: string, runId: string): Promise<RunView> {
    const answer = await call("GET", `/v1/threads/${threadId}/runs/${runId}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as RunView;
  }

  async function until<T>(
    check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
    what: string,
    timeoutMs = 45_000,
  ): Promise<T> {
    const giveUp = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value) return value;
      if (Date.now() > giveUp) {
        const logs = started.map((w, i) => `--- worker ${i + 1}:\n${w.stderr.slice(-2000)}`);
        throw new Error(`gave up waiting for ${what}\n${logs.join("\n")}`);
      }
      await sleep(25);
    }
  }

  async function ended(threadId: string, runId: string): Promise<RunView> {
    const final = ["completed", "failed", "cancelled", "interrupted"];
    return until(async () => {
      const run = await getRun(threadId, runId);
      return final.includes(run.status) ? run : null;
    }, `run ${runId} on ${threadId} to end`);
  }

  function effects(order: number, what: "charged" | "sent"): Effect[] {
    return readEffects<Effect>(effectLog).filter(
      (effect) => effect.line.includes(what) && effect.line.includes(`order ${order}`),
    );
  }

  async function stopAll(): Promise<void> {
    await Promise.all(started.map((worker) => worker.kill()));
  }

  it("SIGKILL mid tool node under release 1; a release 2 worker finishes the run, charged once", async () => {
    const v1 = await startWorker(1);
    const runId = await postRun("kill-1", { messages: [userMessage("charge order 7001")] });
    // Charged and recorded; the receipt is still being sent when the worker dies.
    await until(async () => {
      const answer = await call("GET", "/v1/threads/kill-1/ledger");
      const entries = (answer.body?.data?.entries ?? []) as { tool_name: string; status: string }[];
      return entries.some((e) => e.tool_name === "charge_card" && e.status === "completed");
    }, "the charge recorded in the ledger");
    await v1.kill();
    await startWorker(2);
    const run = await ended("kill-1", runId);
    expect(run.status, JSON.stringify(run)).toBe("completed");
    expect(effects(7001, "charged")).toHaveLength(1);
    const checkpoint = await checkpointer.getCheckpoint("kill-1");
    expect(checkpoint?.graph?.version).toBe("2");
    expect(checkpoint?.values).toMatchObject({ audits: 1 });
    await stopAll();
  }, 90_000);

  it("an interrupt paused under release 1 is answered under release 2", async () => {
    await startWorker(1, { approveCharges: true });
    const first = await postRun("pause-1", { messages: [userMessage("charge order 7002")] });
    expect((await ended("pause-1", first)).status).toBe("interrupted");
    await stopAll();
    await startWorker(2, { approveCharges: true });
    const resumed = await postRun("pause-1", { resume: true });
    const run = await ended("pause-1", resumed);
    expect(run.status, JSON.stringify(run)).toBe("completed");
    expect(effects(7002, "charged")).toHaveLength(1);
    expect((await checkpointer.getCheckpoint("pause-1"))?.graph?.version).toBe("2");
    await stopAll();
  }, 90_000);

  it("a release that cannot continue a thread declines its run, which waits intact, then runs on one that can", async () => {
    await startWorker(1, { approveCharges: true });
    const first = await postRun("stuck-1", { messages: [userMessage("charge order 7003")] });
    expect((await ended("stuck-1", first)).status).toBe("interrupted");
    await stopAll();
    const before = await checkpointer.getCheckpoint("stuck-1");

    const unmigrated = await startWorker("2-unmigrated", { approveCharges: true });
    const resumed = await postRun("stuck-1", { resume: true });
    await until(() => unmigrated.stderr.includes("Declined"), "the decline");
    expect(unmigrated.stderr).toContain("tool 'charge_card'");
    await sleep(500);
    expect(await getRun("stuck-1", resumed)).toMatchObject({ status: "pending", attempts: 0 });
    expect(await checkpointer.getCheckpoint("stuck-1")).toEqual(before);

    // A worker that can continue it (release 2, with the migration) takes it.
    await startWorker(2, { approveCharges: true });
    const run = await ended("stuck-1", resumed);
    expect(run.status, JSON.stringify(run)).toBe("completed");
    expect(effects(7003, "charged")).toHaveLength(1);
    await stopAll();
  }, 90_000);

  it("one release 1 and one release 2 worker at once lose no run", async () => {
    await Promise.all([startWorker(1), startWorker(2)]);
    const orders = Array.from({ length: 6 }, (_, i) => 7100 + i);
    const runs = await Promise.all(
      orders.map(async (order) => ({
        order,
        runId: await postRun(`both-${order}`, { messages: [userMessage(`charge order ${order}`)] }),
      })),
    );
    for (const { order, runId } of runs) {
      const run = await ended(`both-${order}`, runId);
      expect(run.status, JSON.stringify(run)).toBe("completed");
      expect(effects(order, "charged")).toHaveLength(1);
    }
    await stopAll();
  }, 120_000);
});
