/**
 * LangGraph's background runs (`runs.create` and what reads them) on the background runs'
 * PostgreSQL queue, run by `tenxgraph worker` processes beside a pure API node: the run's
 * record and events outlive both, and a SIGKILLed worker's run is taken over by another.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { TEST_JWT_SECRET, tokenFor } from "../support/http.js";
import { clientFor, collect, human, scratchDir, storeFor, type Loose } from "./lg-client.js";
import { writeLgProject } from "./lg-project.js";
import { dropStore } from "../../support/fresh-store.js";
import { STORE_KINDS, type StoreSpec } from "../../support/store-spec.js";

const scratch = scratchDir("lg-sdk-workers-");
const env = { JWT_SECRET_KEY: TEST_JWT_SECRET };
const WEBHOOK_SECRET = "lg-webhook-secret-0123456789";

/** A webhook receiver on 127.0.0.1 keeping each post's event type and run id. */
async function startReceiver() {
  const posts: { type: string; runId: string; signature: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const event = JSON.parse(body) as { type: string; data: { run_id: string } };
      const signature = String(req.headers["tenxgraph-signature"]);
      posts.push({ type: event.type, runId: event.data.run_id, signature });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    posts,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** Short timings, so a lost worker's run is taken over within a second or two. */
async function runsConfig(name: string) {
  return {
    postgres_dsn: await freshDatabase(name),
    heartbeat_ms: 200,
    stale_after_ms: 1000,
    poll_interval_ms: 100,
  };
}

/** A pure API node (its runs go to the worker processes) and its URL. */
async function startApi(dir: string) {
  const api = new CliProcess(["api", "--port", "0", "--workers", "0"], { cwd: dir, env });
  return { api, url: await api.url() };
}

async function startWorker(dir: string) {
  const worker = new CliProcess(["worker"], { cwd: dir, env });
  const workerId = (await worker.waitFor(/worker (\S+) taking runs/))[1]!;
  return { worker, workerId };
}

/** Waits until the thread's ledger holds a completed call of `tool`. */
async function waitForLedger(url: string, threadId: string, tool: string): Promise<void> {
  const token = await tokenFor("alice");
  for (;;) {
    const ledger = await fetch(`${url}/v1/threads/${threadId}/ledger`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const entries = ((await ledger.json()) as Loose).data?.entries ?? [];
    if (entries.some((e: Loose) => e.tool_name === tool && e.status === "completed")) return;
    await sleep(50);
  }
}

describe.each(STORE_KINDS)("LangGraph background runs on workers, threads on %s", (kind) => {
  const dir = join(scratch, `workers-${kind}`);
  let store: StoreSpec;
  let api: CliProcess;
  let worker: CliProcess;
  let workerId: string;
  let url: string;
  let alice: Client;
  let bob: Client;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** How many rooms the project's book_room booked so far (its lines in charges.log). */
  const bookings = () => {
    const log = existsSync(join(dir, "charges.log"))
      ? readFileSync(join(dir, "charges.log"), "utf8")
      : "";
    return log.split("\n").filter((line) => line.startsWith("booked ")).length;
  };

  beforeAll(async () => {
    store = storeFor(kind, "lg_sdk_workers", dir);
    receiver = await startReceiver();
    const webhooks = { secret: WEBHOOK_SECRET, allow_hosts: [receiver.host] };
    writeLgProject(dir, store, await runsConfig(`lg_sdk_workers_${kind}`), { webhooks });
    ({ worker, workerId } = await startWorker(dir));
    ({ api, url } = await startApi(dir));
    alice = await clientFor(url, "alice");
    bob = await clientFor(url, "bob");
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await receiver?.close();
    if (store) await dropStore(store);
  });

  it("queues a run a worker runs: join, list, get, and its stream from Last-Event-ID", async () => {
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", {
      input: human("hi"),
      streamMode: ["values", "updates", "messages-tuple"],
      metadata: { source: "test" },
    });
    expect(run).toMatchObject({ status: "pending", metadata: { source: "test" } });
    const values: Loose = await alice.runs.join(thread.thread_id, run.run_id);
    expect(values.messages.at(-1).content).toBe("hello there friend");
    expect(await alice.runs.get(thread.thread_id, run.run_id)).toMatchObject({
      status: "success",
      assistant_id: "fe096781-5601-53d2-b2f6-0d3403f7e9ca",
    });
    expect((await alice.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([run.run_id]);
    expect(await alice.runs.list(thread.thread_id, { status: "error" })).toEqual([]);
    // The same run as /v1 reads it: run by the worker process.
    const token = await tokenFor("alice");
    const v1 = await fetch(`${url}/v1/threads/${thread.thread_id}/runs/${run.run_id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await v1.json()) as Loose).data).toMatchObject({
      status: "completed",
      worker_id: workerId,
    });

    const events = await collect(alice.runs.joinStream(thread.thread_id, run.run_id));
    expect(events[0]).toMatchObject({
      event: "metadata",
      data: { run_id: run.run_id, attempt: 1 },
    });
    expect(events.map((e) => e.event)).toContain("updates");
    const tuples = events.filter((e) => e.event === "messages").map((e) => e.data[0].content);
    expect(tuples.join("")).toBe("hello there friend");
    expect(events.at(-1)).toMatchObject({ event: "values" });
    const rest = await collect(
      alice.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "1" }),
    );
    expect(rest).toEqual(events.slice(1));
  });

  it("streams a queued run's events mode as a foreground run's: one mapping", async () => {
    const thread = await alice.threads.create();
    const live = await collect(
      alice.runs.stream(thread.thread_id, "agent", {
        input: human("refund"),
        streamMode: "events",
      }),
    );
    const run = await alice.runs.create(thread.thread_id, "agent", {
      input: human("refund"),
      streamMode: "events",
    });
    await alice.runs.join(thread.thread_id, run.run_id);
    const queued = await collect(alice.runs.joinStream(thread.thread_id, run.run_id));
    const shape = (events: Loose[]) =>
      events.filter((e) => e.event === "events").map((e) => `${e.data.event} ${e.data.name}`);
    expect(shape(queued)).toEqual(shape(live));
    const events = queued.filter((e) => e.event === "events").map((e) => e.data);
    expect(events[0]).toMatchObject({ event: "on_chain_start", run_id: run.run_id });
    const toolEnd = events.find((e: Loose) => e.event === "on_tool_end");
    expect(toolEnd).toMatchObject({
      name: "charge_card",
      data: { input: { order_id: "5" }, output: { type: "tool", tool_call_id: "call_1" } },
      metadata: { tenxgraph: { replayed: false } },
    });
    // Mapped again from the stored events: the same run ids.
    const again = await collect(alice.runs.joinStream(thread.thread_id, run.run_id));
    expect(again).toEqual(queued);
  });

  it("cancels a running run, refuses a second (reject) and queues one (enqueue)", async () => {
    const thread = await alice.threads.create();
    const slow = await alice.runs.create(thread.thread_id, "agent", { input: human("slow") });
    await expect(
      alice.runs.create(thread.thread_id, "agent", { input: human("hi") }),
    ).rejects.toMatchObject({ status: 409 });
    const queued = await alice.runs.create(thread.thread_id, "agent", {
      input: human("hi"),
      multitaskStrategy: "enqueue",
    });
    expect(queued.status).toBe("pending");
    await expect(
      alice.runs.cancel(thread.thread_id, slow.run_id, false, "nope" as never),
    ).rejects.toMatchObject({ status: 422 });
    while ((await alice.runs.get(thread.thread_id, slow.run_id)).status === "pending")
      await sleep(50);
    // A run is on the thread: a copy would miss what it records next.
    const threads = await alice.threads.count();
    await expect(alice.threads.copy(thread.thread_id)).rejects.toMatchObject({ status: 409 });
    expect(await alice.threads.count()).toBe(threads);
    await alice.runs.cancel(thread.thread_id, slow.run_id, true);
    expect((await alice.runs.get(thread.thread_id, slow.run_id)).status).toBe("interrupted");
    await expect(alice.runs.cancel(thread.thread_id, slow.run_id)).rejects.toMatchObject({
      status: 409,
    });
    const values: Loose = await alice.runs.join(thread.thread_id, queued.run_id);
    expect(values.messages.at(-1).content).toBe("hello there friend");
    expect((await alice.runs.get(thread.thread_id, queued.run_id)).status).toBe("success");
    await alice.runs.delete(thread.thread_id, slow.run_id);
    expect((await alice.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([queued.run_id]);
  });

  it("multitask_strategy interrupt stops the queued run on its worker and runs the new one", async () => {
    const thread = await alice.threads.create();
    const slow = await alice.runs.create(thread.thread_id, "agent", { input: human("slow") });
    while ((await alice.runs.get(thread.thread_id, slow.run_id)).status === "pending")
      await sleep(50);
    const next = await alice.runs.create(thread.thread_id, "agent", {
      input: human("hi"),
      multitaskStrategy: "interrupt",
    });
    const values: Loose = await alice.runs.join(thread.thread_id, next.run_id);
    expect(values.messages.map((m: Loose) => m.content)).toEqual([
      "slow",
      "hi",
      "hello there friend",
    ]);
    expect((await alice.runs.get(thread.thread_id, slow.run_id)).status).toBe("interrupted");
    expect((await alice.runs.get(thread.thread_id, next.run_id)).status).toBe("success");
  });

  it("multitask_strategy rollback stops the queued run and forks from before it: a domain-keyed call replays", async () => {
    const thread = await alice.threads.create();
    const ledgerBefore = bookings();
    writeFileSync(join(dir, "hold"), "");
    const first = await alice.runs.create(thread.thread_id, "agent", { input: human("book") });
    await waitForLedger(url, thread.thread_id, "book_room");
    // The first run holds the thread in wait_for_bank, its booking recorded.
    const next = await alice.runs.create(thread.thread_id, "agent", {
      input: human("book again"),
      multitaskStrategy: "rollback",
      streamMode: "events",
    });
    expect(next.multitask_strategy).toBe("rollback");
    while ((await alice.runs.get(thread.thread_id, first.run_id)).status === "running")
      await sleep(50);
    expect((await alice.runs.get(thread.thread_id, first.run_id)).status).toBe("interrupted");
    rmSync(join(dir, "hold"));
    const values: Loose = await alice.runs.join(thread.thread_id, next.run_id);
    // The first run's input is gone from the state; its versions stay in the history.
    expect(values.messages[0].content).toBe("book again");
    expect(values.messages.filter((m: Loose) => m.type === "human")).toHaveLength(1);
    expect(values.messages.at(-1).content).toMatch(/^done: /);
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 50 });
    const firsts = history.map((h) => (h.values as Loose).messages?.[0]?.content);
    expect(firsts).toContain("book");
    // Its recorded booking stays in the ledger: the re-run's call under the same key replays.
    expect(bookings()).toBe(ledgerBefore + 1);
    const events = await collect(alice.runs.joinStream(thread.thread_id, next.run_id));
    const booked = events.find(
      (e) => e.event === "events" && e.data.event === "on_tool_end" && e.data.name === "book_room",
    )!;
    expect(booked.data.metadata.tenxgraph).toMatchObject({
      ledger_key: "book_room:room:12",
      replayed: true,
    });
    expect((await alice.runs.get(thread.thread_id, next.run_id)).status).toBe("success");
  });

  it("cancel with action rollback stops the run and forks the thread back to before it", async () => {
    const thread = await alice.threads.create();
    const ledgerBefore = bookings();
    writeFileSync(join(dir, "hold"), "");
    const run = await alice.runs.create(thread.thread_id, "agent", { input: human("book") });
    await waitForLedger(url, thread.thread_id, "book_room");
    // Answered once the run has ended and the thread is forked back (the SDK types it void).
    const cancelled: Loose = await alice.runs.cancel(
      thread.thread_id,
      run.run_id,
      false,
      "rollback",
    );
    rmSync(join(dir, "hold"));
    expect(cancelled.status).toBe("interrupted");
    const state = await alice.threads.getState(thread.thread_id);
    expect((state.values as Loose).messages ?? []).toEqual([]);
    expect(state.next).toEqual([]);
    expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 50 });
    expect(history.some((h) => (h.values as Loose).messages?.[0]?.content === "book")).toBe(true);
    expect(bookings()).toBe(ledgerBefore + 1);
    // The booking stays recorded: a new run asking for the same room replays it.
    const again = await alice.runs.create(thread.thread_id, "agent", { input: human("book") });
    const values: Loose = await alice.runs.join(thread.thread_id, again.run_id);
    expect(values.messages.at(-1).content).toMatch(/^done: /);
    expect(bookings()).toBe(ledgerBefore + 1);
  });

  it("streams a resumable run from the queue: left mid-run, rejoined from its last event", async () => {
    const thread = await alice.threads.create();
    let runId = "";
    const first: { id: string | undefined; event: string }[] = [];
    const leave = new AbortController();
    const stream = alice.runs.stream(thread.thread_id, "agent", {
      input: human("hi"),
      streamMode: ["values", "messages-tuple"],
      streamResumable: true,
      onDisconnect: "continue",
      signal: leave.signal,
      onRunCreated: (meta) => (runId = meta.run_id),
    });
    for await (const part of stream) {
      first.push({ id: (part as { id?: string }).id, event: part.event });
      if (part.event === "messages") break; // a reload, mid-reply
    }
    leave.abort();
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    const all = await collect(alice.runs.joinStream(thread.thread_id, runId));
    const rest = await collect(
      alice.runs.joinStream(thread.thread_id, runId, { lastEventId: first.at(-1)!.id }),
    );
    expect(rest).toEqual(all.slice(first.length));
    expect(rest.at(-1)!.data.messages.at(-1).content).toBe("hello there friend");
    expect((await alice.runs.get(thread.thread_id, runId)).status).toBe("success");
  });

  it("runs stateless: the thread is kept with on_completion keep, else deleted", async () => {
    const kept = await alice.runs.create(null, "agent", {
      input: human("hi"),
      // LangGraph's server takes "keep" | "delete"; the SDK's type names other values.
      onCompletion: "keep" as never,
    });
    const values: Loose = await alice.runs.join(kept.thread_id, kept.run_id);
    expect(values.messages.at(-1).content).toBe("hello there friend");
    expect((await alice.threads.get(kept.thread_id)).thread_id).toBe(kept.thread_id);

    const gone = await alice.runs.create(null, "agent", { input: human("hi") });
    await alice.runs.join(gone.thread_id, gone.run_id);
    expect((await alice.runs.get(gone.thread_id, gone.run_id)).status).toBe("success");
    for (let i = 0; ; i++) {
      const status = await alice.threads.get(gone.thread_id).then(
        () => 200,
        (e: Loose) => e.status,
      );
      if (status === 404) break;
      expect(i).toBeLessThan(100);
      await sleep(50);
    }
  });

  it("refuses another user's runs and threads on every route, and writes nothing", async () => {
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", { input: human("hi") });
    await alice.runs.join(thread.thread_id, run.run_id);
    const refused = { status: 403 };
    await expect(bob.runs.get(thread.thread_id, run.run_id)).rejects.toMatchObject(refused);
    await expect(bob.runs.list(thread.thread_id)).rejects.toMatchObject(refused);
    await expect(bob.runs.join(thread.thread_id, run.run_id)).rejects.toMatchObject(refused);
    await expect(bob.runs.cancel(thread.thread_id, run.run_id)).rejects.toMatchObject(refused);
    await expect(bob.runs.delete(thread.thread_id, run.run_id)).rejects.toMatchObject(refused);
    await expect(collect(bob.runs.joinStream(thread.thread_id, run.run_id))).rejects.toMatchObject(
      refused,
    );
    await expect(
      bob.runs.create(thread.thread_id, "agent", { input: human("mine now") }),
    ).rejects.toMatchObject(refused);
    // Bob's own thread with Alice's run id: not found there.
    const own = await bob.threads.create();
    await expect(bob.runs.get(own.thread_id, run.run_id)).rejects.toMatchObject({ status: 404 });
    expect((await alice.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([run.run_id]);
    expect((await alice.threads.getState(thread.thread_id)).values).toMatchObject({
      messages: [{ content: "hi" }, { content: "hello there friend" }],
    });
  });

  it("posts a run's end to its webhook, signed, and pauses it at interrupt_before", async () => {
    const thread = await alice.threads.create();
    const webhook = `http://${receiver.host}/hook`;
    const run = await alice.runs.create(thread.thread_id, "agent", {
      input: human("hi"),
      webhook,
    });
    await alice.runs.join(thread.thread_id, run.run_id);
    const giveUp = Date.now() + 20_000;
    while (!receiver.posts.some((p) => p.runId === run.run_id) && Date.now() < giveUp)
      await sleep(50);
    const post = receiver.posts.find((p) => p.runId === run.run_id);
    expect(post).toMatchObject({ type: "run.completed", signature: expect.stringMatching(/v1=/) });

    const paused = await alice.runs.create(thread.thread_id, "agent", {
      input: human("refund"),
      interruptBefore: ["TOOL"],
    });
    await alice.runs.join(thread.thread_id, paused.run_id);
    const state = await alice.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["TOOL"]);
    expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");
  });

  it("refuses what a queued run cannot carry with a 422, and writes nothing", async () => {
    const thread = await alice.threads.create();
    const refusals = [
      { input: human("hi"), afterSeconds: 5 },
      { command: { update: { messages: [] } } },
      { input: human("hi"), checkpointId: "1" },
      { input: human("hi"), webhook: "http://169.254.169.254/latest" },
      { input: human("hi"), interruptBefore: ["NOPE"] },
    ];
    for (const payload of refusals)
      await expect(alice.runs.create(thread.thread_id, "agent", payload)).rejects.toMatchObject({
        status: 422,
      });
    expect(await alice.runs.list(thread.thread_id)).toEqual([]);
    expect((await alice.threads.getHistory(thread.thread_id)).length).toBe(1);
  });
});

describe("a LangGraph background run whose worker and API are SIGKILLed mid tool node", () => {
  const dir = join(scratch, "takeover");
  const processes: CliProcess[] = [];
  afterAll(async () => {
    for (const p of processes) await p.stop();
  });

  it("is taken over by another worker, read through a new API: one charge", async () => {
    writeLgProject(dir, undefined, await runsConfig("lg_sdk_takeover"));
    writeFileSync(join(dir, "hold"), "");
    const first = await startWorker(dir);
    let { api, url } = await startApi(dir);
    processes.push(first.worker, api);
    let alice = await clientFor(url, "alice");
    const token = await tokenFor("alice");
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", {
      input: human("crash"),
      streamMode: "updates",
    });
    // The charge is recorded in the ledger while wait_for_bank still holds the tool node.
    for (;;) {
      const ledger = await fetch(`${url}/v1/threads/${thread.thread_id}/ledger`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const entries = ((await ledger.json()) as Loose).data?.entries ?? [];
      if (entries.some((e: Loose) => e.tool_name === "charge_card" && e.status === "completed"))
        break;
      await sleep(50);
    }
    first.worker.child.kill("SIGKILL");
    api.child.kill("SIGKILL");
    await Promise.all([first.worker.exited, api.exited]);
    rmSync(join(dir, "hold"));

    const second = await startWorker(dir);
    ({ api, url } = await startApi(dir));
    processes.push(second.worker, api);
    alice = await clientFor(url, "alice");
    const values: Loose = await alice.runs.join(thread.thread_id, run.run_id);
    expect(values.messages.at(-1).content).toMatch(/^done: /);
    expect(readFileSync(join(dir, "charges.log"), "utf8")).toBe("charged 7\n");
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    const events = await collect(alice.runs.joinStream(thread.thread_id, run.run_id));
    const attempts = events.filter((e) => e.event === "metadata").map((e) => e.data.attempt);
    expect(attempts).toEqual([1, 2]);
    expect(events.at(-1)!.data.MAIN.messages[0].content).toMatch(/^done: /);
  }, 90_000);
});

describe("a LangGraph rollback run whose worker is SIGKILLed after it forked", () => {
  const dir = join(scratch, "rollback-takeover");
  const processes: CliProcess[] = [];
  afterAll(async () => {
    for (const p of processes) await p.stop();
  });

  it("is taken over without forking again: the first attempt's writes stay, one booking", async () => {
    writeLgProject(dir, undefined, await runsConfig("lg_sdk_rollback_takeover"));
    writeFileSync(join(dir, "hold"), "");
    const first = await startWorker(dir);
    const { api, url } = await startApi(dir);
    processes.push(first.worker, api);
    const alice = await clientFor(url, "alice");
    const thread = await alice.threads.create();
    const old = await alice.runs.create(thread.thread_id, "agent", { input: human("book") });
    await waitForLedger(url, thread.thread_id, "book_room");
    const run = await alice.runs.create(thread.thread_id, "agent", {
      input: human("book again"),
      multitaskStrategy: "rollback",
    });
    // The fork is written and MAIN's reply with it: the tool node waits for the bank.
    let reply: Loose;
    for (;;) {
      const values = (await alice.threads.getState(thread.thread_id)).values as Loose;
      if (values.messages?.[0]?.content === "book again" && values.messages[1]) {
        reply = values.messages[1];
        break;
      }
      await sleep(50);
    }
    expect((await alice.runs.get(thread.thread_id, old.run_id)).status).toBe("interrupted");
    first.worker.child.kill("SIGKILL");
    await first.worker.exited;
    rmSync(join(dir, "hold"));
    const second = await startWorker(dir);
    processes.push(second.worker);
    const values: Loose = await alice.runs.join(thread.thread_id, run.run_id);
    expect(values.messages[1].id).toBe(reply.id);
    expect(values.messages.filter((m: Loose) => m.type === "human")).toHaveLength(1);
    expect(values.messages.at(-1).content).toMatch(/^done: /);
    expect(readFileSync(join(dir, "charges.log"), "utf8")).toBe("booked 12\n");
    const events = await collect(alice.runs.joinStream(thread.thread_id, run.run_id));
    const attempts = events.filter((e) => e.event === "metadata").map((e) => e.data.attempt);
    expect(attempts).toEqual([1, 2]);
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
  }, 90_000);
});
