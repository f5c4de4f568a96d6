/**
 * Background runs and the threads they run on, over HTTP with two JWT users: a run never takes
 * over a thread another user created after it was queued, deleting a thread takes its runs with
 * it, and a run queued behind one stopped in its tool node still runs its input.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@tenxgraph/core";
import { serve, type RunRecord, type RunWorker, type RunningServer } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { caller, TEST_JWT_SECRET, tokenFor, userMessage } from "../support/http.js";
import { startRunsApi, testWorker, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph } from "../support/test-graph.js";
import { until } from "../../support/until.js";

/** How long send_receipt takes: long enough to stop a run while its tool node runs. */
const MAILER_DELAY_MS = 2500;

describe("background runs and their threads", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-run-threads-"));
  const spec = freshStore("postgres", "run_threads", dir);
  const gate = join(dir, "gate");
  const checkpointer = openStore(spec);
  const graph = buildTestGraph(
    { effectLog: join(dir, "effects.jsonl"), gateFile: gate, mailerDelayMs: MAILER_DELAY_MS },
    checkpointer,
  );
  let api: RunsApi;
  let server: RunningServer;
  let worker: RunWorker | null = null;
  let alice: ReturnType<typeof caller>;
  let bob: ReturnType<typeof caller>;

  beforeAll(async () => {
    // No worker yet: the first test queues a run before the thread exists and starts one later.
    api = await startRunsApi(graph, "run_threads", { worker: false });
    server = await serve({
      graph,
      port: 0,
      logger: silentLogger,
      auth: { method: "jwt", secret: TEST_JWT_SECRET },
      runs: { store: api.store, follower: api.follower },
    });
    alice = caller(server.url, await tokenFor("alice"));
    bob = caller(server.url, await tokenFor("bob"));
  }, 60_000);

  afterAll(async () => {
    await worker?.drain();
    await server?.close();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  const openGate = () => writeFileSync(gate, "");
  const closeGate = () => rmSync(gate, { force: true });

  async function startWorker(): Promise<RunWorker> {
    if (worker) return worker;
    worker = testWorker(graph, api.store);
    await worker.start();
    return worker;
  }

  const ended = (runId: string) =>
    until(async () => {
      const run = await api.store.getRun(runId);
      return run && ["completed", "failed", "interrupted", "cancelled"].includes(run.status)
        ? run
        : null;
    }, `run ${runId} to end`);

  const userTexts = async (call: typeof alice, threadId: string) =>
    (await call("GET", `/v1/threads/${threadId}/messages`)).body.data.messages
      .filter((m: { role: string }) => m.role === "user")
      .map((m: { content: { text: string }[] }) => m.content[0]!.text);

  it("a run queued before another user created its thread fails and leaves that thread alone", async () => {
    const queued = await bob("POST", "/v1/threads/order-88/runs", {
      messages: [userMessage("charge order 88")],
    });
    expect(queued.status, queued.text).toBe(202);
    const runId = queued.body.data.run_id as string;
    openGate();
    const created = await alice("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 89")],
      config: { thread_id: "order-88" },
    });
    expect(created.status, created.text).toBe(200);
    const before = (await alice("GET", "/v1/threads/order-88")).body.data.thread_data.thread;

    await startWorker();
    const run: RunRecord = await ended(runId);
    expect(run.status).toBe("failed");
    expect(run.error).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(run.error!.message).toContain("another user");
    // Its stream tells the attempt and the failure, and nothing of alice's thread.
    const events = (await api.store.readEvents(runId, 0)).map((e) => e.event.type);
    expect(events).toEqual(["run_attempt", "run_status"]);

    const after = await alice("GET", "/v1/threads/order-88");
    expect(after.status).toBe(200);
    expect(after.body.data.thread_data.thread).toEqual(before);
    expect(await userTexts(alice, "order-88")).toEqual(["charge order 89"]);
    expect((await bob("GET", "/v1/threads/order-88/messages")).status).toBe(403);
  });

  it("answers another user's POST .../runs with 403 before looking at its body", async () => {
    for (const body of [{ multitask_strategy: "rollback", messages: [] }, { messages: "nope" }]) {
      const refused = await bob("POST", "/v1/threads/order-88/runs", body);
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.error.code).toBe("PERMISSION_DENIED");
    }
  });

  it("DELETE of a thread cancels and removes its runs: none re-creates it, the next user sees none", async () => {
    const running = await startWorker();
    closeGate();
    const first = (
      await alice("POST", "/v1/threads/t-del/runs", { messages: [userMessage("charge order 41")] })
    ).body.data.run_id as string;
    const second = (
      await alice("POST", "/v1/threads/t-del/runs", {
        messages: [userMessage("charge order 42")],
        multitask_strategy: "enqueue",
      })
    ).body.data.run_id as string;
    await until(
      async () => (await alice("GET", "/v1/threads/t-del")).body.data.thread_data.thread,
      "the first run to create the thread",
    );
    const joining = alice("GET", `/v1/threads/t-del/runs/${first}/join`);
    const deleted = await alice("DELETE", "/v1/threads/t-del");
    expect(deleted.status, deleted.text).toBe(200);
    // A join waiting on a removed run ends instead of waiting for good.
    const joined = await joining;
    expect(joined.status, joined.text).toBe(404);

    expect((await alice("GET", "/v1/threads/t-del/runs")).body.data.runs).toEqual([]);
    for (const runId of [first, second]) {
      expect(await api.store.getRun(runId)).toBeNull();
      expect(await api.store.readEvents(runId, 0)).toEqual([]);
    }
    const jobs = await api.store.pool.query(
      "SELECT 1 FROM graphile_worker.jobs WHERE key = ANY($1::text[])",
      [[first, second].map((id) => `tenxgraph_run:${id}`)],
    );
    expect(jobs.rows).toEqual([]);
    // The running run is given up by its worker without another write.
    await until(async () => !running.activeRuns.includes(first), "the worker to give the run up");
    openGate();
    expect((await alice("GET", "/v1/threads/t-del")).body.data.thread_data.thread).toBeNull();

    const fresh = await bob("POST", "/v1/threads/t-del/runs", {
      messages: [userMessage("charge order 43")],
    });
    expect(fresh.status, fresh.text).toBe(202);
    const bobRun = fresh.body.data.run_id as string;
    expect((await ended(bobRun)).status).toBe("completed");
    const listed = (await bob("GET", "/v1/threads/t-del/runs")).body.data.runs;
    expect(listed.map((r: { run_id: string }) => r.run_id)).toEqual([bobRun]);
    expect(await userTexts(bob, "t-del")).toEqual(["charge order 43"]);
  });

  it.each(["interrupt", "enqueue"] as const)(
    "a run queued with %s behind one stopped in its tool node continues the thread, then runs its input",
    async (strategy) => {
      await startWorker();
      openGate();
      const threadId = `t-tool-stop-${strategy}`;
      const first = (
        await alice("POST", `/v1/threads/${threadId}/runs`, {
          messages: [userMessage("charge order 51")],
        })
      ).body.data.run_id as string;
      await until(async () => {
        const ledger = await alice("GET", `/v1/threads/${threadId}/ledger`);
        return ledger.body.data?.entries.some(
          (e: { tool_name: string; status: string }) =>
            e.tool_name === "send_receipt" && e.status === "started",
        );
      }, "the first run to be in its tool node");
      const next = await alice("POST", `/v1/threads/${threadId}/runs`, {
        messages: [userMessage("charge order 52")],
        multitask_strategy: strategy,
      });
      expect(next.status, next.text).toBe(202);
      // `enqueue` waits behind the first run: cancel it while its tool runs.
      if (strategy === "enqueue") {
        expect((await alice("POST", `/v1/threads/${threadId}/runs/${first}/cancel`)).status).toBe(
          202,
        );
      }
      expect((await ended(first)).status).toBe(
        strategy === "interrupt" ? "interrupted" : "cancelled",
      );
      const second = await ended(next.body.data.run_id as string);
      expect(second.error).toBeNull();
      expect(second.status).toBe("completed");
      // Its stream tells both: the continuation of the stopped run, then its own turn.
      const types = (await api.store.readEvents(second.runId, 0)).map((e) => e.event.type);
      expect(types.filter((type) => type === "run_start")).toHaveLength(2);
      expect(await userTexts(alice, threadId)).toEqual(["charge order 51", "charge order 52"]);
      const state = (await alice("GET", `/v1/threads/${threadId}/state`)).body.data.state;
      expect(state.execution_meta.internal_data.status).toBe("completed");
    },
  );
});
