/**
 * Schedules (`/v1/crons`) over HTTP with two JWT users: checked and owned like threads; each
 * tick is claimed in the database so two schedulers start it once; ticks missed while every
 * scheduler was down run once, not once each; a tick queues an ordinary background run.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TenxgraphClient } from "@tenxgraph/client";
import { silentLogger } from "@tenxgraph/core";
import { CronScheduler, cronStore, serve, type RunningServer } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { caller, TEST_JWT_SECRET, tokenFor, userMessage } from "../support/http.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph } from "../support/test-graph.js";

describe("schedules: /v1/crons and the scheduler", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-crons-"));
  const spec = freshStore("postgres", "crons", dir);
  const gate = join(dir, "gate");
  const checkpointer = openStore(spec);
  const graph = buildTestGraph(
    { effectLog: join(dir, "effects.jsonl"), gateFile: gate },
    checkpointer,
  );
  let api: RunsApi;
  let server: RunningServer;
  let alice: ReturnType<typeof caller>;
  let bob: ReturnType<typeof caller>;

  beforeAll(async () => {
    // The worker runs LangGraph crons' runs too: they name their graph ("agent").
    api = await startRunsApi(graph, "crons", { worker: { graphs: new Map([["agent", graph]]) } });
    server = await serve({
      graph,
      port: 0,
      logger: silentLogger,
      auth: { method: "jwt", secret: TEST_JWT_SECRET },
      runs: { store: api.store, follower: api.follower },
    });
    alice = caller(server.url, await tokenFor("alice"));
    bob = caller(server.url, await tokenFor("bob"));
    writeFileSync(gate, "");
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  const scheduler = () =>
    new CronScheduler({
      ctx: server.app.context,
      store: cronStore(api.store.pool),
      logger: silentLogger,
    });

  const body = (extra: Record<string, unknown>) => ({
    messages: [userMessage("charge order 3")],
    ...extra,
  });

  it("refuses a bad schedule, time zone or webhook, and writes nothing", async () => {
    const bad = [
      body({ schedule: "every day" }),
      body({ schedule: "0 9 * * *", timezone: "Mars/Olympus" }),
      body({ schedule: "0 9 * * *", webhook: "http://127.0.0.1/hook" }),
      { schedule: "0 9 * * *", messages: [] },
    ];
    for (const sent of bad) {
      const answer = await alice("POST", "/v1/crons", sent);
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    }
    expect((await alice("GET", "/v1/crons")).body.data.crons).toEqual([]);
  });

  it("owns a schedule per user: another user gets 403 and changes nothing", async () => {
    const created = await alice(
      "POST",
      "/v1/crons",
      body({ schedule: "0 9 * * *", timezone: "Europe/Paris" }),
    );
    expect(created.status).toBe(201);
    const cron = created.body.data;
    expect(cron).toMatchObject({
      schedule: "0 9 * * *",
      timezone: "Europe/Paris",
      thread_id: null,
    });
    expect(new Date(cron.next_run_at).getTime()).toBeGreaterThan(Date.now());
    expect((await bob("GET", `/v1/crons/${cron.cron_id}`)).status).toBe(403);
    expect((await bob("DELETE", `/v1/crons/${cron.cron_id}`)).status).toBe(403);
    expect((await bob("GET", "/v1/crons")).body.data.crons).toEqual([]);
    expect((await alice("GET", `/v1/crons/${cron.cron_id}`)).body.data.cron_id).toBe(cron.cron_id);

    // A schedule on alice's thread is bob's to make on none of his.
    await alice("POST", "/v1/threads/alices/runs", body({}));
    const onTheirs = await bob(
      "POST",
      "/v1/crons",
      body({ schedule: "0 9 * * *", thread_id: "alices" }),
    );
    expect(onTheirs.status).toBe(403);
    expect((await bob("GET", "/v1/crons")).body.data.crons).toEqual([]);

    expect((await alice("DELETE", `/v1/crons/${cron.cron_id}`)).status).toBe(200);
    expect((await alice("GET", `/v1/crons/${cron.cron_id}`)).status).toBe(404);
  });

  it("runs ticks missed while no scheduler ran once, and two schedulers start a tick once", async () => {
    const created = await alice(
      "POST",
      "/v1/crons",
      body({ schedule: "* * * * * *", thread_id: "cron-1", multitask_strategy: "enqueue" }),
    );
    expect(created.status).toBe(201);
    const cronId = created.body.data.cron_id as string;
    // Every scheduler down across three ticks or more.
    await sleep(3500);
    const [first, second] = await Promise.all([scheduler().runDue(), scheduler().runDue()]);
    expect(first.length + second.length).toBe(1);
    const detail = await alice("GET", `/v1/crons/${cronId}`);
    expect(detail.body.data.ticks).toEqual([
      expect.objectContaining({ thread_id: "cron-1", queued: true, error: null }),
    ]);
    expect(new Date(detail.body.data.next_run_at).getTime()).toBeGreaterThan(Date.now() - 1000);
    // The tick's run is an ordinary background run of alice's, run by the worker.
    const runId = detail.body.data.ticks[0].run_id as string;
    const joined = await alice("GET", `/v1/threads/cron-1/runs/${runId}/join`);
    expect(joined.body.data.status).toBe("completed");
    expect((await alice("GET", "/v1/threads/cron-1/runs")).body.data.runs).toHaveLength(1);
    expect((await alice("DELETE", `/v1/crons/${cronId}`)).status).toBe(200);
  });

  it("a LangGraph cron is a schedule of the same store: its missed ticks run once", async () => {
    const thread = await alice("POST", "/threads", {});
    const threadId = thread.body.thread_id as string;
    const created = await alice("POST", `/threads/${threadId}/runs/crons`, {
      assistant_id: "agent",
      schedule: "* * * * * *",
      input: { messages: [{ type: "human", content: "charge order 3" }] },
      multitask_strategy: "enqueue",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const cronId = created.body.cron_id as string;
    // Every scheduler down across three ticks or more.
    await sleep(3500);
    const [first, second] = await Promise.all([scheduler().runDue(), scheduler().runDue()]);
    expect([...first, ...second].map((t) => t.cron.cronId)).toEqual([cronId]);
    // /v1 reads the same schedule, and its tick's run is LangGraph's (its assistant's).
    const ticks = (await alice("GET", `/v1/crons/${cronId}`)).body.data.ticks;
    expect(ticks).toEqual([expect.objectContaining({ thread_id: threadId, queued: true })]);
    const joined = await alice("GET", `/v1/threads/${threadId}/runs/${ticks[0].run_id}/join`);
    expect(joined.body.data.status, JSON.stringify(joined.body.data)).toBe("completed");
    const runs = (await alice("GET", `/threads/${threadId}/runs`)).body;
    expect(runs).toEqual([
      expect.objectContaining({ run_id: ticks[0].run_id, assistant_id: expect.any(String) }),
    ]);
    expect(runs[0].assistant_id).toBe(created.body.assistant_id);
    expect((await alice("DELETE", `/runs/crons/${cronId}`)).status).toBe(204);
    expect((await alice("GET", `/v1/crons/${cronId}`)).status).toBe(404);
  });

  it("a tick whose scheduler died before queueing its run is queued later, once, under its run id", async () => {
    const created = await alice(
      "POST",
      "/v1/crons",
      body({ schedule: "0 0 1 1 *", thread_id: "cron-2" }),
    );
    const cronId = created.body.data.cron_id as string;
    const store = cronStore(api.store.pool);
    await api.store.pool.query(
      "UPDATE tenxgraph_crons SET next_tick_at = now() - interval '1 second' WHERE cron_id = $1",
      [cronId],
    );
    // A scheduler claims the tick, then dies before it queues the run.
    const [claimed, ...more] = await store.claimDue(randomUUID);
    expect(more).toEqual([]);
    expect(await store.claimDue(randomUUID)).toEqual([]);
    const later = new CronScheduler({
      ctx: server.app.context,
      store,
      logger: silentLogger,
      requeueAfterMs: 0,
    });
    expect((await later.runDue()).map((t) => t.runId)).toEqual([claimed!.runId]);
    expect(await later.runDue()).toEqual([]);
    const runs = (await alice("GET", "/v1/threads/cron-2/runs")).body.data.runs;
    expect(runs.map((r: { run_id: string }) => r.run_id)).toEqual([claimed!.runId]);
    await alice("DELETE", `/v1/crons/${cronId}`);
  });

  it("@tenxgraph/client creates, lists, reads and deletes schedules", async () => {
    const client = new TenxgraphClient({ baseUrl: server.url, token: await tokenFor("carol") });
    const cron = await client.createCron("tick", {
      schedule: "30 6 * * *",
      timezone: "America/New_York",
      multitaskStrategy: "enqueue",
    });
    expect(cron).toMatchObject({ schedule: "30 6 * * *", multitask_strategy: "enqueue" });
    expect((await client.listCrons()).map((c) => c.cron_id)).toEqual([cron.cron_id]);
    expect(await client.getCron(cron.cron_id)).toMatchObject({ cron_id: cron.cron_id, ticks: [] });
    await client.deleteCron(cron.cron_id);
    expect(await client.listCrons()).toEqual([]);
  });

  it("a running scheduler starts a schedule's ticks as they come, each on a fresh thread", async () => {
    const created = await alice("POST", "/v1/crons", body({ schedule: "* * * * * *" }));
    const cronId = created.body.data.cron_id as string;
    const running = new CronScheduler({
      ctx: server.app.context,
      store: cronStore(api.store.pool),
      logger: silentLogger,
      intervalMs: 100,
    });
    running.start();
    try {
      const giveUp = Date.now() + 30_000;
      type Tick = { thread_id: string; queued: boolean; error: unknown };
      let ticks: Tick[] = [];
      // The newest tick may be claimed and not yet queued when read: wait for two queued.
      while (ticks.filter((t) => t.queued).length < 2 && Date.now() < giveUp) {
        await sleep(100);
        ticks = (await alice("GET", `/v1/crons/${cronId}`)).body.data.ticks;
      }
      expect(ticks.filter((t) => t.queued).length).toBeGreaterThanOrEqual(2);
      expect(new Set(ticks.map((t) => t.thread_id)).size).toBe(ticks.length);
      expect(ticks.every((t) => t.error === null)).toBe(true);
    } finally {
      await running.stop();
      await alice("DELETE", `/v1/crons/${cronId}`);
    }
  });
});
