/**
 * Background-run workers in real processes on one PostgreSQL, SIGKILLed at random points and
 * SIGTERMed: every run still completes once, on a live worker, its stream stays one gapless
 * sequence that tells each hand-back, and no tool call takes effect twice unless it was in doubt
 * (and then it was reported).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { PgRunStore, RunningServer } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { between, mulberry32 } from "../../crash/support/prng.js";
import { readEffects } from "../../support/effect-log.js";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { WorkerProcess } from "../../support/worker-process.js";
import { caller, userMessage } from "../support/http.js";
import type { RunWorkerParams } from "../support/run-worker.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph, type Effect } from "../support/test-graph.js";
import { readRunStream, type RunStreamEvent } from "./run-stream-client.js";
import { until } from "../../support/until.js";

const RUN_WORKER = new URL("../support/run-worker.ts", import.meta.url);
/** How long send_receipt takes: a kill or a SIGTERM can land while it runs. */
const MAILER_DELAY_MS = 800;
/** The seed of the kill delays; a failure names it, and the same seed replays the same plan. */
const SEED = Number(process.env.WORKER_CRASH_SEED ?? 20_261_201);

interface LedgerEntryJson {
  key: string;
  tool_name: string;
  status: string;
  attempt: number;
}

/** A worker process with the id it was given. */
interface Worker {
  id: string;
  process: WorkerProcess;
}

describe("run workers in processes: SIGKILL, SIGTERM, restart of every worker", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-worker-crash-"));
  const spec = freshStore("postgres", "worker_crash", dir);
  const effectLog = join(dir, "effects.jsonl");
  const checkpointer = openStore(spec);
  const graph = buildTestGraph({ effectLog }, checkpointer);
  /** Every worker process ever started, live or not (their stderr holds the in-doubt reports). */
  const started: Worker[] = [];
  let live: Worker[] = [];
  let api: RunsApi;
  let runsDsn: string;
  let store: PgRunStore;
  let server: RunningServer;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    // No worker here: the workers are the processes the test kills.
    api = await startRunsApi(graph, "worker_crash", { worker: false });
    ({ dsn: runsDsn, store, server } = api);
    call = caller(server.url);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(started.map((w) => w.process.kill()));
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a worker process (not waiting for it to be ready). */
  function startWorker(): Worker & { ready: Promise<unknown> } {
    const id = `w${started.length + 1}`;
    const params: RunWorkerParams = {
      store: spec,
      runsDsn,
      effectLog,
      mailerDelayMs: MAILER_DELAY_MS,
      workerId: id,
      concurrency: 2,
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
    };
    const worker = { id, process: new WorkerProcess(RUN_WORKER, params) };
    started.push(worker);
    live.push(worker);
    return { ...worker, ready: worker.process.waitForType("ready", 60_000) };
  }

  async function startWorkers(n: number): Promise<void> {
    await Promise.all(Array.from({ length: n }, () => startWorker().ready));
  }

  async function killWorker(worker: Worker): Promise<void> {
    live = live.filter((w) => w !== worker);
    const exit = await worker.process.kill();
    expect(exit.signal, `${worker.id} died of SIGKILL`).toBe("SIGKILL");
  }

  async function postRun(threadId: string, order: number): Promise<string> {
    const posted = await call("POST", `/v1/threads/${threadId}/runs`, {
      messages: [userMessage(`charge order ${order}`)],
    });
    expect(posted.status, posted.text).toBe(202);
    return posted.body.data.run_id as string;
  }

  async function getRun(threadId: string, runId: string) {
    const answer = await call("GET", `/v1/threads/${threadId}/runs/${runId}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as { status: string; worker_id: string | null; attempts: number };
  }

  /** The worker the run is `running` on, once it is. */
  function runningOn(threadId: string, runId: string): Promise<Worker> {
    return until(async () => {
      const run = await getRun(threadId, runId);
      if (run.status !== "running") return null;
      return started.find((w) => w.id === run.worker_id) ?? null;
    }, `run ${runId} (${threadId}) to be running on a worker`);
  }

  /** Waits (polling, so a stuck run fails naming its state) for the run's end; it must complete. */
  async function joinRun(threadId: string, runId: string) {
    const final = ["completed", "failed", "cancelled", "interrupted"];
    const run = await until(
      async () => {
        const now = await getRun(threadId, runId);
        return final.includes(now.status) ? now : null;
      },
      `run ${runId} (${threadId}) to end`,
      { timeoutMs: 60_000 },
    ).catch(async (error: Error) => {
      const jobs = await store.pool.query("SELECT * FROM graphile_worker.jobs WHERE key = $1", [
        `tenxgraph_run:${runId}`,
      ]);
      const row = await store.getRun(runId);
      throw new Error(
        `${error.message}\nrun: ${JSON.stringify(row)}\njob: ${JSON.stringify(jobs.rows)}\n` +
          `events: ${JSON.stringify(await store.readEvents(runId, 0))}\n${workerLogs()}`,
      );
    });
    if (run.status !== "completed") {
      throw new Error(`run ${runId} ended ${JSON.stringify(run)}\n${workerLogs()}`);
    }
    return run;
  }

  /**
   * Locks the run's job, and its queue if it is in one (a thread's first run is not), as a
   * graphile-worker that then died would have.
   */
  async function lockJobAsDeadWorker(runId: string): Promise<void> {
    const locked = await store.pool.query(
      `WITH job AS (
         UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'dead-queue-worker'
          WHERE key = $1 AND locked_at IS NULL RETURNING job_queue_id),
       queue AS (
         UPDATE graphile_worker._private_job_queues
            SET locked_at = now(), locked_by = 'dead-queue-worker'
          WHERE id IN (SELECT job_queue_id FROM job))
       SELECT 1 FROM job`,
      [`tenxgraph_run:${runId}`],
    );
    expect(locked.rowCount, "locked the run's job").toBe(1);
  }

  /** Every worker's stderr, for failure messages. */
  function workerLogs(): string {
    return started.map((w) => `--- ${w.id}:\n${w.process.stderr.slice(-3000)}`).join("\n");
  }

  async function ledgerOf(threadId: string): Promise<LedgerEntryJson[]> {
    const answer = await call("GET", `/v1/threads/${threadId}/ledger`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data.entries as LedgerEntryJson[];
  }

  /** The IN DOUBT warnings any worker logged for the ledger key `key`. */
  function inDoubtReports(key: string): { key: string; tool: string; attempt: number }[] {
    return started.flatMap((w) =>
      w.process.stderr
        .split("\n")
        .filter((line) => line.startsWith("{") && line.includes("IN DOUBT"))
        .map((line) => JSON.parse(line) as { key: string; tool: string; attempt: number })
        .filter((report) => report.key === key),
    );
  }

  /**
   * A run's stream from the start is one gapless sequence 1..N ending `completed`; each attempt
   * after the first follows a hand-back (`run_requeued`) of the reason expected.
   */
  async function checkStream(
    threadId: string,
    runId: string,
    attempts: number,
    requeueReason: "worker_lost" | "drain",
  ): Promise<RunStreamEvent[]> {
    const all = await readRunStream(server.url, threadId, runId);
    const at = `stream of ${runId} (${threadId})`;
    expect(
      all.map((e) => e.id),
      `${at}: ids 1..N`,
    ).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)?.event, `${at}: last event`).toEqual({
      type: "run_status",
      status: "completed",
    });
    expect(
      all.filter((e) => e.event.type === "run_status"),
      `${at}: one run_status`,
    ).toHaveLength(1);
    const starts = all.filter((e) => e.event.type === "run_attempt");
    expect(
      starts.map((e) => e.event.attempt),
      `${at}: attempts`,
    ).toEqual(Array.from({ length: attempts }, (_, i) => i + 1));
    const requeues = all.filter((e) => e.event.type === "run_requeued");
    expect(requeues, `${at}: one hand-back before each later attempt`).toHaveLength(attempts - 1);
    for (const requeue of requeues) expect(requeue.event.reason, at).toBe(requeueReason);
    // Each hand-back comes between the attempt it ends and the next one.
    for (let i = 1; i < starts.length; i++) {
      const handBacks = all.filter(
        (e) => e.id > starts[i - 1]!.id && e.id < starts[i]!.id && e.event.type === "run_requeued",
      );
      expect(handBacks, `${at}: hand-back before attempt ${i + 1}`).toHaveLength(1);
      expect(handBacks[0]!.event.workerId, at).toBe(starts[i - 1]!.event.workerId);
    }
    return all;
  }

  /**
   * The effect log agrees with the ledger for `order`: every call recorded, charge_card with its
   * domain key, each side effect once unless its call was in doubt (ledger attempt ≥ 2, and then
   * no more times than it was claimed), and every repeat of a side effect reported IN DOUBT by a
   * worker. A claim can be taken again without being in doubt: a live worker that lost its run
   * (a heartbeat late on a loaded machine) hands back the claims whose tools had not begun.
   */
  async function checkEffects(threadId: string, order: number): Promise<LedgerEntryJson[]> {
    const at = `order ${order} (${threadId})`;
    const ledger = await ledgerOf(threadId);
    expect(ledger.map((e) => [e.tool_name, e.status]).sort(), `${at}: ledger`).toEqual([
      ["charge_card", "completed"],
      ["lookup_order", "completed"],
      ["send_receipt", "completed"],
    ]);
    const effects = readEffects<Effect>(effectLog);
    const charges = effects.filter((e) =>
      e.line.startsWith(`payment provider: charged order ${order} `),
    );
    const receipts = effects.filter(
      (e) => e.line === `mailer: sent the receipt for order ${order}`,
    );
    // The provider charges a key once: every charge of the order carries the order's key.
    expect(new Set(charges.map((e) => e.line)), `${at}: charged under one domain key`).toEqual(
      new Set([`payment provider: charged order ${order} (key order-${order}-charge)`]),
    );
    for (const [tool, done] of [
      ["charge_card", charges],
      ["send_receipt", receipts],
    ] as const) {
      const entry = ledger.find((e) => e.tool_name === tool)!;
      expect(done.length, `${at}: ${tool} took effect at least once`).toBeGreaterThanOrEqual(1);
      expect(
        done.length,
        `${at}: ${tool} took effect ${done.length} times but was claimed ${entry.attempt} times`,
      ).toBeLessThanOrEqual(entry.attempt);
      if (done.length > 1) {
        expect(entry.attempt, `${at}: ${tool} ran twice without being in doubt`).toBeGreaterThan(1);
        expect(
          inDoubtReports(entry.key).length,
          `${at}: ${tool} took effect ${done.length} times: each repeat reported IN DOUBT`,
        ).toBeGreaterThanOrEqual(done.length - 1);
      }
    }
    return ledger;
  }

  it("SIGKILL of the worker holding a run, 20 times at random points: each run completes once on a live worker", async () => {
    const rng = mulberry32(SEED);
    await startWorkers(3);
    const killed: {
      threadId: string;
      order: number;
      runId: string;
      worker: string;
      delay: number;
    }[] = [];
    const replacements: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      const threadId = `kill-${i}`;
      const order = 5000 + i;
      const runId = await postRun(threadId, order);
      const holder = await runningOn(threadId, runId);
      // Before the tools, inside the slow receipt, or after the run ended.
      const delay = between(rng, 0, 1400);
      await sleep(delay);
      await killWorker(holder);
      killed.push({ threadId, order, runId, worker: holder.id, delay });
      // Three stay up; the next run does not wait for the replacement.
      replacements.push(startWorker().ready);
    }
    await Promise.all(replacements);

    const takenOver: (typeof killed)[number][] = [];
    let inDoubtCalls = 0;
    let inDoubtInStreams = 0;
    for (const { threadId, order, runId, worker, delay } of killed) {
      const at = `run ${runId} (${threadId}, ${worker} killed after ${delay} ms, seed ${SEED})`;
      const done = await joinRun(threadId, runId);
      const stream = await checkStream(threadId, runId, done.attempts, "worker_lost");
      const attempts = stream.filter((e) => e.event.type === "run_attempt");
      const endedOnKilled = attempts.at(-1)!.event.workerId === worker;
      if (endedOnKilled) {
        // The kill came after the run had ended: nothing to take over.
        expect(done.attempts, at).toBe(1);
      } else {
        takenOver.push({ threadId, order, runId, worker, delay });
        expect(done.attempts, `${at}: attempts`).toBeGreaterThanOrEqual(2);
        expect(done.worker_id, `${at}: ended on another worker`).not.toBe(worker);
        expect(
          stream.some(
            (e) =>
              e.event.type === "run_requeued" &&
              e.event.reason === "worker_lost" &&
              e.event.workerId === worker,
          ),
          `${at}: handed back from the killed worker`,
        ).toBe(true);
      }
      const ledger = await checkEffects(threadId, order);
      // In-doubt calls reach the run's stream too (tool_in_doubt), not only the workers' logs.
      // Counted over all runs: the event of an attempt killed before its next append is lost
      // with it, as every event not yet written is.
      for (const entry of ledger.filter((e) => inDoubtReports(e.key).length > 0)) {
        inDoubtCalls += 1;
        if (stream.some((e) => e.event.type === "tool_in_doubt" && e.event.key === entry.key)) {
          inDoubtInStreams += 1;
        }
      }
    }
    if (inDoubtCalls > 0) {
      expect(inDoubtInStreams, "in-doubt calls surfaced in their run's stream").toBeGreaterThan(0);
    }
    // The plan is meant to kill runs mid-way; a seed that never does tests nothing.
    expect(takenOver.length, "runs taken over after a kill").toBeGreaterThanOrEqual(6);

    // A reader that drops and reconnects with Last-Event-ID reads the same stream.
    const resumed = takenOver[0]!;
    const whole = await readRunStream(server.url, resumed.threadId, resumed.runId);
    const k = Math.floor(whole.length / 2);
    const first = await readRunStream(server.url, resumed.threadId, resumed.runId, {
      stopAfter: k,
    });
    const rest = await readRunStream(server.url, resumed.threadId, resumed.runId, {
      lastEventId: first.at(-1)!.id,
    });
    expect([...first, ...rest]).toEqual(whole);
  }, 150_000);

  it("SIGTERM in the middle of the slow tool: exits 0, hands the run back, nothing in doubt", async () => {
    while (live.length < 3) await startWorker().ready;
    const threadId = "drain-1";
    const order = 6001;
    const runId = await postRun(threadId, order);
    const holder = await runningOn(threadId, runId);
    await until(
      async () =>
        (await store.readEvents(runId, 0)).some(
          (e) => e.event.type === "tool_start" && e.event.toolName === "send_receipt",
        ),
      "send_receipt to start",
    );
    await sleep(MAILER_DELAY_MS / 4);
    live = live.filter((w) => w !== holder);
    holder.process.child.kill("SIGTERM");
    const exit = await holder.process.exited;
    expect(exit, `${holder.id} drained and exited\n${holder.process.stderr}`).toEqual({
      code: 0,
      signal: null,
    });
    const replacement = startWorker().ready;

    const done = await joinRun(threadId, runId);
    expect(done.worker_id).not.toBe(holder.id);
    expect(done.attempts).toBe(2);
    const stream = await checkStream(threadId, runId, 2, "drain");
    expect(stream.find((e) => e.event.type === "run_requeued")!.event).toEqual({
      type: "run_requeued",
      reason: "drain",
      workerId: holder.id,
    });
    const ledger = await checkEffects(threadId, order);
    expect(
      ledger.filter((e) => e.attempt > 1),
      "a drained run leaves no call in doubt",
    ).toEqual([]);
    const effects = readEffects<Effect>(effectLog).filter((e) => e.line.includes(`order ${order}`));
    expect(effects.map((e) => e.line).sort()).toEqual([
      `mailer: sent the receipt for order ${order}`,
      `payment provider: charged order ${order} (key order-${order}-charge)`,
    ]);
    await replacement;
  }, 60_000);

  it("runs survive a restart of every worker: one killed mid-run, one queued while none ran", async () => {
    while (live.length < 3) await startWorker().ready;
    const midRun = await postRun("restart-mid", 7001);
    const holder = await runningOn("restart-mid", midRun);
    await sleep(MAILER_DELAY_MS / 2);
    await Promise.all([...live].map(killWorker));
    expect(holder.process.child.signalCode).toBe("SIGKILL");

    const queued = await postRun("restart-queued", 7002);
    await sleep(500);
    expect((await getRun("restart-queued", queued)).status, "no worker: still queued").toBe(
      "pending",
    );
    expect((await getRun("restart-mid", midRun)).status, "its worker is dead").toBe("running");

    // A worker that died after graphile-worker locked a run's job but before the run began
    // (its row never said `running`) left the job locked.
    const orphaned = await postRun("restart-locked", 7003);
    await lockJobAsDeadWorker(orphaned);

    await startWorkers(2);
    const [mid, fresh] = await Promise.all([
      joinRun("restart-mid", midRun),
      joinRun("restart-queued", queued),
    ]);
    const unlocked = await joinRun("restart-locked", orphaned);
    expect(unlocked.attempts).toBe(1);
    await checkStream("restart-locked", orphaned, 1, "worker_lost");
    await checkEffects("restart-locked", 7003);
    expect(mid.attempts).toBeGreaterThanOrEqual(2);
    expect(mid.worker_id).not.toBe(holder.id);
    expect(fresh.attempts).toBe(1);
    await checkStream("restart-mid", midRun, mid.attempts, "worker_lost");
    await checkStream("restart-queued", queued, 1, "worker_lost");
    await checkEffects("restart-mid", 7001);
    await checkEffects("restart-queued", 7002);
  }, 90_000);
});
