/**
 * Webhooks of background runs against a real `node:http` receiver: a run's end is written to
 * the outbox with its final event, delivered signed, retried with backoff while the receiver
 * fails, with one event id throughout; deliveries owed survive a deliverer that was not running
 * (or died) when the run ended; a URL that is not http(s) is refused and queues nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TenxgraphClient } from "@tenxgraph/client";
import { silentLogger } from "@tenxgraph/core";
import {
  PgRunStore,
  serve,
  verifyWebhook,
  WebhookDeliverer,
  type RunningServer,
  type WebhookSettings,
} from "@tenxgraph/server";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { WorkerProcess } from "../../support/worker-process.js";
import { openStore } from "../../support/store-spec.js";
import { caller, TEST_JWT_SECRET, tokenFor, userMessage } from "../support/http.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph } from "../support/test-graph.js";

type RunRequest = Parameters<PgRunStore["createRun"]>[0]["request"];

const DELIVERER = new URL("../support/webhook-deliverer.ts", import.meta.url);
const SECRET = "webhook-test-secret-0123456789";

/** A receiver that answers 500 to the first `failFirst` posts of each event, then 200. */
function startReceiver(failFirst: number) {
  const received: { headers: IncomingHttpHeaders; body: string; answered: number }[] = [];
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const id = String(req.headers["tenxgraph-event-id"]);
      const count = (seen.get(id) ?? 0) + 1;
      seen.set(id, count);
      const answered = count <= failFirst ? 500 : 200;
      received.push({ headers: req.headers, body, answered });
      res.statusCode = answered;
      res.end();
    });
  });
  return new Promise<{ url: string; received: typeof received; close(): Promise<void> }>(
    (resolve) =>
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        resolve({
          url: `http://127.0.0.1:${port}/hook`,
          received,
          close: () => new Promise((done) => server.close(() => done())),
        });
      }),
  );
}

async function until(check: () => boolean | Promise<boolean>, what: string) {
  const giveUp = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe("webhooks of background runs", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-webhooks-"));
  const spec = freshStore("postgres", "run_webhooks", dir);
  const gate = join(dir, "gate");
  const checkpointer = openStore(spec);
  const graph = buildTestGraph(
    { effectLog: join(dir, "effects.jsonl"), gateFile: gate },
    checkpointer,
  );
  const settings: WebhookSettings = {
    secret: SECRET,
    maxAttempts: 5,
    retryBaseMs: 50,
    timeoutMs: 2000,
    pollIntervalMs: 50,
  };
  let api: RunsApi;
  let server: RunningServer;
  let alice: ReturnType<typeof caller>;

  beforeAll(async () => {
    api = await startRunsApi(graph, "run_webhooks");
    server = await serve({
      graph,
      port: 0,
      logger: silentLogger,
      auth: { method: "jwt", secret: TEST_JWT_SECRET },
      runs: { store: api.store, follower: api.follower, webhooks: settings },
    });
    alice = caller(server.url, await tokenFor("alice"));
    writeFileSync(gate, "");
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  const deliverer = () =>
    new WebhookDeliverer({ pool: api.store.pool, settings, logger: silentLogger });

  async function runToEnd(threadId: string, webhook: string) {
    const posted = await alice("POST", `/v1/threads/${threadId}/runs`, {
      messages: [userMessage("charge order 7")],
      webhook,
    });
    expect(posted.status).toBe(202);
    const runId = posted.body.data.run_id as string;
    const joined = await alice("GET", `/v1/threads/${threadId}/runs/${runId}/join`);
    expect(joined.body.data.status).toBe("completed");
    return runId;
  }

  it("retries a failing receiver with backoff and delivers once, signed, with one event id", async () => {
    const receiver = await startReceiver(2);
    const sender = deliverer();
    sender.start();
    try {
      const runId = await runToEnd("hook-1", receiver.url);
      await until(() => receiver.received.some((r) => r.answered === 200), "a delivery");
      await sender.stop();
      expect(receiver.received.map((r) => r.answered)).toEqual([500, 500, 200]);
      const ids = new Set(receiver.received.map((r) => r.headers["tenxgraph-event-id"]));
      expect(ids.size).toBe(1);
      for (const { headers, body } of receiver.received) {
        expect(verifyWebhook(SECRET, body, String(headers["tenxgraph-signature"]))).toBe(true);
        expect(verifyWebhook("another-secret", body, String(headers["tenxgraph-signature"]))).toBe(
          false,
        );
        const event = JSON.parse(body);
        expect(event).toMatchObject({
          id: headers["tenxgraph-event-id"],
          type: "run.completed",
          data: { run_id: runId, thread_id: "hook-1", event: { type: "run_status" } },
        });
      }
      const state = await alice("GET", `/v1/threads/hook-1/runs/${runId}/webhooks`);
      expect(state.status).toBe(200);
      expect(state.body.data.deliveries).toEqual([
        expect.objectContaining({
          type: "run.completed",
          state: "delivered",
          attempts: 3,
          last_status: 200,
          url: receiver.url,
          next_attempt_at: null,
        }),
      ]);
      // Another user reads nothing of it.
      const bob = caller(server.url, await tokenFor("bob"));
      expect((await bob("GET", `/v1/threads/hook-1/runs/${runId}/webhooks`)).status).toBe(403);
    } finally {
      await sender.stop();
      await receiver.close();
    }
  });

  it("keeps a delivery owed while no deliverer runs, and a later one delivers it", async () => {
    const receiver = await startReceiver(0);
    try {
      const runId = await runToEnd("hook-2", receiver.url);
      const owed = await alice("GET", `/v1/threads/hook-2/runs/${runId}/webhooks`);
      expect(owed.body.data.deliveries).toEqual([
        expect.objectContaining({ state: "pending", attempts: 0, last_status: null }),
      ]);
      expect(await deliverer().deliverDue()).toBe(1);
      expect(receiver.received.map((r) => r.answered)).toEqual([200]);
      expect(await deliverer().deliverDue()).toBe(0);
      const client = new TenxgraphClient({ baseUrl: server.url, token: await tokenFor("alice") });
      expect(await client.listRunWebhooks("hook-2", runId)).toEqual([
        expect.objectContaining({ state: "delivered", attempts: 1, last_status: 200 }),
      ]);
    } finally {
      await receiver.close();
    }
  });

  it("a deliverer SIGKILLed in the middle of a delivery: another delivers it, same event id", async () => {
    // The receiver never answers the first post: the deliverer is killed while it waits.
    let firstArrived = false;
    const received: { id: string; body: string }[] = [];
    const hanging = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        received.push({ id: String(req.headers["tenxgraph-event-id"]), body });
        if (!firstArrived) {
          firstArrived = true;
          return;
        }
        res.end();
      });
    });
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hook`;
    const child = new WorkerProcess(DELIVERER, {
      runsDsn: api.dsn,
      settings: { ...settings, timeoutMs: 1000 },
    });
    try {
      await child.waitForType("ready", 60_000);
      const runId = await runToEnd("hook-4", url);
      await until(() => firstArrived, "the first post").catch((error: unknown) => {
        throw new Error(`${String(error)}; the deliverer said: ${child.stderr}`);
      });
      child.child.kill("SIGKILL");
      expect((await child.exited).signal).toBe("SIGKILL");
      // Its attempt's time limit (1 s) doubled, then the row is due again for anyone.
      const sender = deliverer();
      sender.start();
      await until(() => received.length === 2, "the second post");
      await sender.stop();
      expect(received[1]!.id).toBe(received[0]!.id);
      expect(received[1]!.body).toBe(received[0]!.body);
      const state = await alice("GET", `/v1/threads/hook-4/runs/${runId}/webhooks`);
      expect(state.body.data.deliveries).toEqual([
        expect.objectContaining({ state: "delivered", attempts: 2, last_status: 200 }),
      ]);
    } finally {
      child.child.kill("SIGKILL");
      hanging.closeAllConnections();
      await new Promise((done) => hanging.close(done));
    }
  }, 120_000);

  it("owes a delivery for each call found in doubt and each end, written with the event", async () => {
    // A store of its own, no worker: the test is the worker.
    const store = new PgRunStore({ postgresDsn: await freshDatabase("webhook_outbox") });
    const webhook = "http://127.0.0.1:9/hook";
    const request = (threadId: string, hook: boolean): RunRequest => ({
      input: { messages: [] },
      config: { threadId, userId: null },
      ...(hook ? { webhook } : {}),
    });
    const owed = async (runId: string) =>
      (
        await store.pool.query<{ type: string; event_id: string; url: string }>(
          `SELECT body->>'type' AS type, event_id, url FROM tenxgraph_webhook_deliveries
            WHERE run_id = $1 ORDER BY event_id`,
          [runId],
        )
      ).rows;
    try {
      const base = { userId: null, strategy: "reject" as const };
      await store.createRun({
        ...base,
        runId: "r-1",
        threadId: "t-1",
        request: request("t-1", true),
      });
      const run = await store.beginAttempt("r-1", "w-1", null, async () => 0);
      const ref = { runId: "r-1", attempt: run!.attempts, workerId: "w-1" };
      const inDoubt = {
        type: "tool_in_doubt" as const,
        node: "tools",
        key: "k",
        toolCallId: "call-1",
        toolName: "charge_card",
        attempt: 1,
        policy: "fail" as const,
      };
      expect(await store.appendEvents(ref, [inDoubt])).toBe(true);
      // A worker that lost the run writes no event, so it owes no delivery either.
      const stale = { ...ref, attempt: ref.attempt + 1 };
      expect(await store.finishAttempt(stale, { kind: "final", status: "completed" })).toBe(false);
      const failed = { code: "TOOL_001", message: "in doubt" };
      expect(
        await store.finishAttempt(ref, { kind: "final", status: "failed", error: failed }),
      ).toBe(true);
      expect(await owed("r-1")).toEqual([
        { type: "run.tool_in_doubt", event_id: "r-1:2", url: webhook },
        { type: "run.failed", event_id: "r-1:3", url: webhook },
      ]);

      await store.createRun({
        ...base,
        runId: "r-2",
        threadId: "t-2",
        request: request("t-2", true),
      });
      await store.cancelRun("r-2");
      expect((await owed("r-2")).map((d) => d.type)).toEqual(["run.cancelled"]);

      await store.createRun({
        ...base,
        runId: "r-3",
        threadId: "t-3",
        request: request("t-3", false),
      });
      await store.cancelRun("r-3");
      expect(await owed("r-3")).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("refuses a webhook that is not http(s), and queues nothing", async () => {
    const posted = await alice("POST", `/v1/threads/hook-3/runs`, {
      messages: [userMessage("charge order 8")],
      webhook: "file:///etc/passwd",
    });
    expect(posted.status).toBe(422);
    expect(posted.body.error.message).toMatch(/http or https/);
    expect((await alice("GET", `/v1/threads/hook-3/runs`)).body.data.runs).toEqual([]);
  });
});
