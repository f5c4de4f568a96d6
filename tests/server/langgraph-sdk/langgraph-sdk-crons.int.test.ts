/**
 * LangGraph's crons (`client.crons`) over the schedules of `/v1/crons`: one store and the API
 * node's one scheduler; each tick queues a LangGraph background run, which the API's worker
 * runs. A cron is its creator's: another user neither sees nor deletes nor changes it.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@langchain/langgraph-sdk";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { TEST_JWT_SECRET } from "../support/http.js";
import { clientFor, human, scratchDir, type Loose } from "./lg-client.js";
import { writeLgProject } from "./lg-project.js";

const scratch = scratchDir("lg-sdk-crons-");
const env = { JWT_SECRET_KEY: TEST_JWT_SECRET };
const ASSISTANT_ID = "fe096781-5601-53d2-b2f6-0d3403f7e9ca";

/** Polls `read` until `done` holds of its value (20 s at most). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const giveUp = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > giveUp) return value;
    await sleep(100);
  }
}

describe("LangGraph crons on the schedules' store and scheduler", () => {
  const dir = join(scratch, "crons");
  let api: CliProcess;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    const runs = { postgres_dsn: await freshDatabase("lg_sdk_crons"), poll_interval_ms: 100 };
    writeLgProject(dir, undefined, runs);
    // One API node with its own worker: it runs the scheduler and the ticks' runs.
    api = new CliProcess(["api", "--port", "0", "--workers", "1"], { cwd: dir, env });
    const url = await api.url();
    alice = await clientFor(url, "alice");
    bob = await clientFor(url, "bob");
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
  });

  it("runs a thread's cron every second until deleted; only its creator sees it", async () => {
    const thread = await alice.threads.create();
    const cron = await alice.crons.createForThread(thread.thread_id, "agent", {
      schedule: "* * * * * *",
      input: human("hi"),
      metadata: { source: "cron" },
      multitaskStrategy: "enqueue",
    });
    expect(cron).toMatchObject({
      thread_id: thread.thread_id,
      assistant_id: ASSISTANT_ID,
      schedule: "* * * * * *",
      metadata: { source: "cron" },
    });

    const runs = await until(
      () => alice.runs.list(thread.thread_id),
      (list) => list.some((r) => r.status === "success"),
    );
    expect(runs.find((r) => r.status === "success")).toMatchObject({
      assistant_id: ASSISTANT_ID,
      metadata: { source: "cron" },
    });
    const state = await alice.threads.getState(thread.thread_id);
    expect((state.values as Loose).messages.at(-1).content).toBe("hello there friend");

    const found = await alice.crons.search({ threadId: thread.thread_id });
    expect(found.map((c) => c.cron_id)).toEqual([cron.cron_id]);
    expect(await alice.crons.count({ assistantId: "agent", metadata: { source: "cron" } })).toBe(1);
    expect(await alice.crons.count({ assistantId: "no-such-graph" })).toBe(0);

    expect(await bob.crons.search()).toEqual([]);
    expect(await bob.crons.count()).toBe(0);
    const notFound = { status: 404 };
    await expect(bob.crons.delete(cron.cron_id)).rejects.toMatchObject(notFound);
    await expect(bob.crons.update(cron.cron_id, { schedule: "0 0 1 1 *" })).rejects.toMatchObject(
      notFound,
    );
    // Bob cannot schedule runs on Alice's thread (refused as runs.create is).
    await expect(
      bob.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *" }),
    ).rejects.toMatchObject({ status: 403 });
    expect((await alice.crons.search()).map((c) => c.schedule)).toEqual(["* * * * * *"]);

    await alice.crons.delete(cron.cron_id);
    expect(await alice.crons.search()).toEqual([]);
    await expect(alice.crons.delete(cron.cron_id)).rejects.toMatchObject(notFound);
    // A tick claimed before the delete may still be queued: then no more.
    await sleep(1500);
    const settled = (await alice.runs.list(thread.thread_id, { limit: 100 })).length;
    await sleep(2500);
    expect((await alice.runs.list(thread.thread_id, { limit: 100 })).length).toBe(settled);
  }, 60_000);

  it("runs a stateless cron on a new thread per tick, kept with onRunCompleted keep", async () => {
    const before = new Set((await alice.threads.search({ limit: 100 })).map((t) => t.thread_id));
    const cron = await alice.crons.create("agent", {
      schedule: "* * * * * *",
      input: human("hi"),
      onRunCompleted: "keep",
    });
    expect(cron).toMatchObject({ thread_id: null, on_run_completed: "keep" });
    const threads = await until(
      () => alice.threads.search({ limit: 100 }),
      (list) => list.some((t) => !before.has(t.thread_id)),
    );
    const made = threads.find((t) => !before.has(t.thread_id))!;
    const [run] = await until(
      () => alice.runs.list(made.thread_id),
      (list) => list[0]?.status === "success",
    );
    expect(run).toMatchObject({ assistant_id: ASSISTANT_ID, status: "success" });
    await alice.crons.delete(cron.cron_id);
  }, 60_000);

  it("updates a cron's schedule and input, and refuses what it cannot honour with a 422", async () => {
    const cron = await alice.crons.create("agent", {
      schedule: "0 9 * * *",
      timezone: "Europe/Paris",
      input: human("hi"),
    });
    const updated = await alice.crons.update(cron.cron_id, {
      schedule: "30 8 * * 1",
      input: human("hello"),
    });
    expect(updated).toMatchObject({
      cron_id: cron.cron_id,
      schedule: "30 8 * * 1",
      timezone: "Europe/Paris",
      payload: { input: human("hello") },
    });
    expect(new Date(updated.next_run_date!).getUTCDay()).toBe(1);

    const thread = await alice.threads.create();
    const refusals: Loose[] = [
      { schedule: "every second" },
      { schedule: "0 9 * * *", timezone: "Mars/Olympus" },
      { schedule: "0 9 * * *", endTime: "2030-01-01T00:00:00Z" },
      { schedule: "0 9 * * *", enabled: false },
      { schedule: "0 9 * * *", interruptBefore: ["NOPE"] },
      { schedule: "0 9 * * *", webhook: "http://169.254.169.254/latest" },
    ];
    for (const payload of refusals) {
      await expect(
        alice.crons.createForThread(thread.thread_id, "agent", payload),
      ).rejects.toMatchObject({ status: 422 });
    }
    await expect(
      alice.crons.update(cron.cron_id, { schedule: "every second" }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      alice.crons.create("no-such-graph", { schedule: "0 9 * * *" }),
    ).rejects.toMatchObject({ status: 404 });
    expect((await alice.crons.search()).map((c) => c.schedule)).toEqual(["30 8 * * 1"]);
    await alice.crons.delete(cron.cron_id);
  });
});

describe("LangGraph crons without PostgreSQL for background runs", () => {
  let api: CliProcess;
  let alice: Client;

  beforeAll(async () => {
    const dir = join(scratch, "no-runs");
    writeLgProject(dir);
    api = new CliProcess(["api", "--port", "0"], { cwd: dir, env });
    alice = await clientFor(await api.url(), "alice");
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
  });

  it("answers 501, as /v1/crons does", async () => {
    const thread = await alice.threads.create();
    const answer = { status: 501 };
    await expect(
      alice.crons.createForThread(thread.thread_id, "agent", { schedule: "0 9 * * *" }),
    ).rejects.toMatchObject(answer);
    await expect(alice.crons.search()).rejects.toMatchObject(answer);
    await expect(alice.crons.delete("x")).rejects.toMatchObject(answer);
  });
});
