import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@tenxgraph/core";
import {
  serve,
  type PgRunStore,
  type RunEventFollower,
  type RunWorker,
  type RunningServer,
} from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEffects } from "../../support/effect-log.js";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { caller, TEST_JWT_SECRET, tokenFor, userMessage } from "../support/http.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph, type Effect } from "../support/test-graph.js";
import { readRunStream } from "./run-stream-client.js";
import { until } from "../../support/until.js";

describe("background runs: POST, read, join, stream, cancel, multitask strategies", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-runs-"));
  const spec = freshStore("postgres", "background_runs", dir);
  const effectLog = join(dir, "effects.jsonl");
  const gate = join(dir, "gate");
  const checkpointer = openStore(spec);
  const graph = buildTestGraph({ effectLog, gateFile: gate }, checkpointer);
  let api: RunsApi;
  let store: PgRunStore;
  let follower: RunEventFollower;
  let worker: RunWorker;
  let server: RunningServer;
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    api = await startRunsApi(graph, "background_runs", { worker: { concurrency: 2 } });
    ({ store, follower, server } = api);
    worker = api.worker!;
    call = caller(server.url);
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  const openGate = () => writeFileSync(gate, "");
  const closeGate = () => rmSync(gate, { force: true });

  async function postRun(threadId: string, text: string, extra: Record<string, unknown> = {}) {
    return call("POST", `/v1/threads/${threadId}/runs`, {
      messages: [userMessage(text)],
      ...extra,
    });
  }

  async function statusOf(threadId: string, runId: string): Promise<string> {
    return (await call("GET", `/v1/threads/${threadId}/runs/${runId}`)).body.data.status;
  }

  it("queues a run that a worker executes; join waits for its end; the stream replays it", async () => {
    openGate();
    const posted = await postRun("bg-1", "charge order 11");
    expect(posted.status).toBe(202);
    expect(posted.body.data).toMatchObject({ thread_id: "bg-1", status: "pending" });
    const runId = posted.body.data.run_id as string;

    const joined = await call("GET", `/v1/threads/bg-1/runs/${runId}/join`);
    expect(joined.status).toBe(200);
    expect(joined.body.data).toMatchObject({
      run_id: runId,
      thread_id: "bg-1",
      status: "completed",
      attempts: 1,
      worker_id: worker.workerId,
    });
    expect(typeof joined.body.data.created_at).toBe("string");

    const listed = await call("GET", "/v1/threads/bg-1/runs");
    expect(listed.body.data.runs.map((r: { run_id: string }) => r.run_id)).toEqual([runId]);

    const all = await readRunStream(server.url, "bg-1", runId);
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
    expect(all[0]!.event).toMatchObject({ type: "run_attempt", attempt: 1 });
    expect(all.at(-1)!.event).toEqual({ type: "run_status", status: "completed" });
    const types = all.map((e) => e.event.type);
    expect(types).toContain("run_start");
    expect(types).toContain("tool_result");
    expect(types).toContain("run_end");

    // A reconnect after event k gets exactly the events after k.
    const k = Math.floor(all.length / 2);
    const rest = await readRunStream(server.url, "bg-1", runId, { lastEventId: k });
    expect(rest).toEqual(all.slice(k));
    const charges = readEffects<Effect>(effectLog).filter((e) => e.line.includes("order 11"));
    expect(charges.filter((e) => e.line.includes("charged"))).toHaveLength(1);
  });

  it("follows a live run: events arrive while it runs, and the stream ends with it", async () => {
    closeGate();
    const runId = (await postRun("bg-live", "charge order 12")).body.data.run_id as string;
    const reading = readRunStream(server.url, "bg-live", runId);
    await until(async () => (await statusOf("bg-live", runId)) === "running", "the run to start");
    openGate();
    const events = await reading;
    expect(events.at(-1)!.event).toEqual({ type: "run_status", status: "completed" });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  });

  it("reject (the default) answers 409 while the thread has an active run", async () => {
    closeGate();
    const first = (await postRun("bg-busy", "charge order 13")).body.data.run_id as string;
    const second = await postRun("bg-busy", "charge order 14");
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe("THREAD_BUSY");
    expect(second.body.error.message).toContain(first);
    // Refused whole: no run row (nor job) for the second.
    const listed = await call("GET", "/v1/threads/bg-busy/runs");
    expect(listed.body.data.runs.map((r: { run_id: string }) => r.run_id)).toEqual([first]);
    openGate();
    await call("GET", `/v1/threads/bg-busy/runs/${first}/join`);
  });

  it("enqueue runs the new run after the active one, in order", async () => {
    closeGate();
    const first = (await postRun("bg-queue", "charge order 15")).body.data.run_id as string;
    const second = await postRun("bg-queue", "charge order 16", {
      multitask_strategy: "enqueue",
    });
    expect(second.status).toBe(202);
    const secondId = second.body.data.run_id as string;
    await until(async () => (await statusOf("bg-queue", first)) === "running", "the first run");
    expect(await statusOf("bg-queue", secondId)).toBe("pending");
    openGate();
    const done = await call("GET", `/v1/threads/bg-queue/runs/${secondId}/join`);
    expect(done.body.data.status).toBe("completed");
    expect(await statusOf("bg-queue", first)).toBe("completed");
    const said = (await call("GET", "/v1/threads/bg-queue/messages")).body.data.messages
      .filter((m: { role: string }) => m.role === "user")
      .map((m: { content: { text: string }[] }) => m.content[0]!.text);
    expect(said).toEqual(["charge order 15", "charge order 16"]);
  });

  it("interrupt stops the active run at its next safe point, then runs the new one", async () => {
    closeGate();
    const first = (await postRun("bg-int", "charge order 17")).body.data.run_id as string;
    await until(async () => (await statusOf("bg-int", first)) === "running", "the first run");
    const second = await postRun("bg-int", "charge order 18", {
      multitask_strategy: "interrupt",
    });
    expect(second.status).toBe(202);
    const firstEnd = await call("GET", `/v1/threads/bg-int/runs/${first}/join`);
    expect(firstEnd.body.data.status).toBe("interrupted");
    openGate();
    const secondEnd = await call(
      "GET",
      `/v1/threads/bg-int/runs/${second.body.data.run_id as string}/join`,
    );
    expect(secondEnd.body.data.status).toBe("completed");
  });

  it("cancel ends a pending run at once and stops a running one", async () => {
    closeGate();
    const running = (await postRun("bg-cancel", "charge order 19")).body.data.run_id as string;
    const queued = (
      await postRun("bg-cancel", "charge order 20", { multitask_strategy: "enqueue" })
    ).body.data.run_id as string;
    await until(async () => (await statusOf("bg-cancel", running)) === "running", "the run");

    const cancelQueued = await call("POST", `/v1/threads/bg-cancel/runs/${queued}/cancel`);
    expect(cancelQueued.status).toBe(202);
    expect(cancelQueued.body.data.status).toBe("cancelled");
    const cancelRunning = await call("POST", `/v1/threads/bg-cancel/runs/${running}/cancel`);
    expect(cancelRunning.status).toBe(202);
    const ended = await call("GET", `/v1/threads/bg-cancel/runs/${running}/join`);
    expect(ended.body.data.status).toBe("cancelled");
    const again = await call("POST", `/v1/threads/bg-cancel/runs/${running}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("RUN_ENDED");
    const stream = await readRunStream(server.url, "bg-cancel", queued);
    expect(stream.map((e) => e.event)).toEqual([{ type: "run_status", status: "cancelled" }]);
  });

  it("keeps another user's runs out of reach, before and after the thread exists", async () => {
    const authed = await serve({
      graph,
      port: 0,
      logger: silentLogger,
      auth: { method: "jwt", secret: TEST_JWT_SECRET },
      runs: { store, follower },
    });
    try {
      const alice = caller(authed.url, await tokenFor("alice"));
      const bob = caller(authed.url, await tokenFor("bob"));
      closeGate();
      const posted = await alice("POST", "/v1/threads/bg-owned/runs", {
        messages: [userMessage("charge order 22")],
      });
      expect(posted.status).toBe(202);
      const runId = posted.body.data.run_id as string;
      const paths = [
        ["GET", `/v1/threads/bg-owned/runs/${runId}`],
        ["GET", "/v1/threads/bg-owned/runs"],
        ["GET", `/v1/threads/bg-owned/runs/${runId}/stream`],
        ["GET", `/v1/threads/bg-owned/runs/${runId}/join`],
        ["POST", `/v1/threads/bg-owned/runs/${runId}/cancel`],
      ] as const;
      for (const [method, path] of paths) {
        expect((await bob(method, path)).status, `${method} ${path} by another user`).toBe(403);
      }
      openGate();
      expect((await alice("GET", `/v1/threads/bg-owned/runs/${runId}/join`)).body.data.status).toBe(
        "completed",
      );
      for (const [method, path] of paths) {
        expect((await bob(method, path)).status, `${method} ${path} by another user`).toBe(403);
      }
      const intruding = await bob("POST", "/v1/threads/bg-owned/runs", {
        messages: [userMessage("charge order 23")],
      });
      expect(intruding.status).toBe(403);
      expect((await alice("GET", "/v1/threads/bg-owned/runs")).body.data.runs).toHaveLength(1);
    } finally {
      await authed.close();
    }
  });

  it("names bad input: unknown strategy, malformed Last-Event-ID, unknown run", async () => {
    const bad = await postRun("bg-bad", "hi", { multitask_strategy: "rollback" });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain("multitask_strategy");
    // A background run does not fork (docs/history.md): fork in the foreground, then queue.
    const fork = await postRun("bg-bad", "hi", { config: { from_version: 1 } });
    expect(fork.status).toBe(422);
    expect(fork.body.error.details[0].loc).toEqual(["body", "config", "from_version"]);
    const unknown = await call("GET", "/v1/threads/bg-bad/runs/no-such-run");
    expect(unknown.status).toBe(404);
    openGate();
    const runId = (await postRun("bg-bad", "charge order 21")).body.data.run_id as string;
    const wrong = await call("GET", `/v1/threads/bg-bad/runs/${runId}/stream`, undefined, {
      "last-event-id": "abc",
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.message).toContain("Last-Event-ID");
    await call("GET", `/v1/threads/bg-bad/runs/${runId}/join`);
  });
});

describe("background runs without a queue", () => {
  it("answer 501 with what to configure", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tenxgraph-no-runs-"));
    const checkpointer = openStore({ kind: "sqlite", path: join(dir, "t.db") });
    const graph = buildTestGraph({ effectLog: join(dir, "e.jsonl") }, checkpointer);
    const server = await serve({ graph, port: 0, logger: silentLogger });
    try {
      const answer = await caller(server.url)("POST", "/v1/threads/t/runs", {
        messages: [userMessage("hi")],
      });
      expect(answer.status).toBe(501);
      expect(answer.body.error.code).toBe("RUNS_NOT_CONFIGURED");
      expect(answer.body.error.message).toContain("runs.postgres_dsn");
    } finally {
      await server.close();
      await checkpointer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
