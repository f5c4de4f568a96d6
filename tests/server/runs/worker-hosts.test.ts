/**
 * Background-run workers on three "hosts" (network namespaces) sharing one PostgreSQL in the
 * root namespace. The host running a run loses its link in the middle of a slow tool: another
 * host's worker takes the run over and finishes it, the card is charged once, and when the cut
 * host comes back its worker finds it lost the run and stops without writing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { silentLogger } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { PgRunStore, RunEventFollower, serve, type RunningServer } from "@tenxgraph/server";
import { PostgresServer } from "@tenxgraph/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEffects } from "../../support/effect-log.js";
import {
  createHostNetwork,
  netnsSupport,
  type Host,
  type HostNetwork,
} from "../../support/netns-hosts.js";
import { openStore, type PostgresStoreSpec } from "../../support/store-spec.js";
import { WorkerProcess } from "../../support/worker-process.js";
import { caller, userMessage } from "../support/http.js";
import type { RunWorkerParams } from "../support/run-worker.js";
import { buildTestGraph, type Effect } from "../support/test-graph.js";
import { readRunStream } from "./run-stream-client.js";
import { until } from "../../support/until.js";

const support = await netnsSupport();
// CI runs as root, where a missing namespace is a broken machine and must fail, not pass quietly.
const asRoot = process.getuid?.() === 0;
if (!support.ok)
  console.warn(`worker-hosts: workers on separate hosts untested: ${support.reason}`);

const HEARTBEAT_MS = 250;
const STALE_AFTER_MS = 1500;
/** send_receipt's delay: long enough to cut the host while it runs. */
const MAILER_DELAY_MS = 5000;
/** Give-up time for every wait; none of them measures speed. */
const GIVE_UP_MS = 60_000;

/** `dsn` with its host replaced: the same database reached at another address. */
function at(dsn: string, host: string): string {
  const url = new URL(dsn);
  url.hostname = host;
  return url.toString();
}

describe("network namespace support", () => {
  // Not skipped either way, so CI (root) counts no skipped test: it fails there without them.
  it("is there when running as root, as in CI", () => {
    if (support.ok) return;
    if (asRoot) expect.fail(`running as root, but: ${support.reason}`);
    console.warn(`host tests skipped: ${support.reason}`);
  });
});

describe.skipIf(!support.ok)("background-run workers on three hosts, one PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-worker-hosts-"));
  const effectLog = join(dir, "effects.jsonl");
  let network: HostNetwork | undefined;
  let postgres: PostgresServer | undefined;
  let checkpointer: Checkpointer | undefined;
  let store: PgRunStore | undefined;
  let follower: RunEventFollower | undefined;
  let server: RunningServer | undefined;
  const workers = new Map<string, { host: Host; process: WorkerProcess }>();
  let call: ReturnType<typeof caller>;

  beforeAll(async () => {
    network = await createHostNetwork(3);
    postgres = await PostgresServer.start({
      name: "worker-hosts",
      fsync: false,
      listenAddresses: ["127.0.0.1", network.rootAddress],
      trustCidrs: [network.cidr],
    });
    const threadsDsn = await postgres.createDatabase("threads");
    const runsDsn = await postgres.createDatabase("runs");
    // No Redis: the shared one listens on 127.0.0.1, which the hosts cannot reach.
    const spec: PostgresStoreSpec = { kind: "postgres", dsn: threadsDsn, schema: "worker_hosts" };
    checkpointer = openStore(spec);
    const graph = buildTestGraph({ effectLog }, checkpointer);
    store = new PgRunStore({ postgresDsn: runsDsn });
    await store.setup();
    follower = new RunEventFollower(runsDsn);
    server = await serve({ graph, port: 0, logger: silentLogger, runs: { store, follower } });
    call = caller(server.url);

    const script = new URL("../support/run-worker.ts", import.meta.url);
    for (const [i, host] of network.hosts.entries()) {
      const workerId = `host-${i}`;
      const params: RunWorkerParams = {
        store: { ...spec, dsn: at(threadsDsn, network.rootAddress) },
        runsDsn: at(runsDsn, network.rootAddress),
        workerId,
        heartbeatMs: HEARTBEAT_MS,
        staleAfterMs: STALE_AFTER_MS,
        effectLog,
        mailerDelayMs: MAILER_DELAY_MS,
      };
      const process = new WorkerProcess(script, params, {
        launch: (command, args, options) => host.spawn(command, args, options),
      });
      workers.set(workerId, { host, process });
    }
    for (const { process } of workers.values()) await process.waitForType("ready", GIVE_UP_MS);
  }, 120_000);

  afterAll(async () => {
    const steps: [string, () => Promise<unknown>][] = [
      ["workers", () => Promise.all([...workers.values()].map((w) => w.process.kill()))],
      ["server", async () => server?.close()],
      ["follower", async () => follower?.close()],
      ["run store", async () => store?.close()],
      ["checkpointer", async () => checkpointer?.close()],
      ["network", async () => network?.dispose()],
      ["postgres", async () => postgres?.destroy()],
    ];
    const failures: unknown[] = [];
    for (const [what, step] of steps) {
      await step().catch((error: unknown) => failures.push(new Error(what, { cause: error })));
    }
    rmSync(dir, { recursive: true, force: true });
    if (failures.length > 0) throw failures[0];
  }, 60_000);

  it("a host cut off mid-tool loses its run to another host, which finishes it; restored, the cut host writes nothing", async () => {
    const threadId = "hosts-1";
    const posted = await call("POST", `/v1/threads/${threadId}/runs`, {
      messages: [userMessage("charge order 4821")],
    });
    expect(posted.status).toBe(202);
    const runId = posted.body.data.run_id as string;
    const getRun = async () =>
      (await call("GET", `/v1/threads/${threadId}/runs/${runId}`)).body.data;
    const charges = () =>
      readEffects<Effect>(effectLog).filter((e) => /charged order 4821/.test(e.line));
    const receipts = () =>
      readEffects<Effect>(effectLog).filter((e) => /receipt for order 4821/.test(e.line));

    // Running on some host with the charge recorded and send_receipt claimed: the mailer's slow
    // part. (Cut before the charge is recorded and the new owner would charge again, with the
    // same idempotency key: that is the provider's to deduplicate, not what this test is about.)
    const first = await until(async () => {
      const run = await getRun();
      if (run.status !== "running") return false;
      const ledger = await checkpointer!.listCalls(threadId);
      const status = (tool: string) => ledger.find((e) => e.toolName === tool)?.status;
      return status("charge_card") === "completed" && status("send_receipt") === "started" && run;
    }, "the run to be in send_receipt with its charge recorded");
    const cutId = first.worker_id as string;
    const cut = workers.get(cutId);
    expect(cut, `a worker named ${cutId}`).toBeDefined();
    const cutPid = cut!.process.child.pid;
    expect(charges().map((e) => e.pid)).toEqual([cutPid]);

    await cut!.host.cut();
    const cutAt = new Date().toISOString();
    let restoredAt: string | undefined;
    let restored = false;
    try {
      const joined = await call("GET", `/v1/threads/${threadId}/runs/${runId}/join`);
      expect(joined.status).toBe(200);
      expect(joined.body.data).toMatchObject({ run_id: runId, status: "completed" });
      expect(joined.body.data.worker_id).not.toBe(cutId);
      expect(workers.has(joined.body.data.worker_id as string)).toBe(true);
      expect(joined.body.data.attempts).toBeGreaterThanOrEqual(2);

      const stream = (await readRunStream(server!.url, threadId, runId)).map((e) => e.event);
      expect(stream).toContainEqual({
        type: "run_requeued",
        reason: "worker_lost",
        workerId: cutId,
      });
      expect(stream.at(-1)).toEqual({ type: "run_status", status: "completed" });
      expect(charges()).toHaveLength(1);
      expect(receipts().map((e) => e.pid)).not.toContain(cutPid);

      // While still cut off, the worker gave the run up itself (its heartbeat went unanswered).
      expect(cut!.process.stderr).toContain("Cut off from the run store: gave runs up");
      expect(cut!.process.stderr).toContain(runId);

      const finishedBy = joined.body.data.worker_id as string;
      const before = {
        version: (await checkpointer!.getCheckpoint(threadId))!.version,
        ledger: await checkpointer!.listCalls(threadId),
        events: stream.length,
      };
      expect(before.ledger.map((e) => `${e.toolName}:${e.status}`).sort()).toEqual([
        "charge_card:completed",
        "lookup_order:completed",
        "send_receipt:completed",
      ]);
      // The charge was recorded by the first attempt and replayed, never claimed again.
      expect(before.ledger.find((e) => e.toolName === "charge_card")!.attempt).toBe(1);

      await cut!.host.restore();
      restored = true;
      restoredAt = new Date().toISOString();
      // The cut-off worker finds out it lost the run (its late appends are refused) and says so.
      await until(
        async () => /Run lost to another worker/.test(cut!.process.stderr),
        `${cutId} to log that it lost the run`,
        { timeoutMs: GIVE_UP_MS },
      );
      // A few more heartbeats for any late write it might still try.
      await sleep(8 * HEARTBEAT_MS);

      expect((await checkpointer!.getCheckpoint(threadId))!.version).toBe(before.version);
      expect(await checkpointer!.listCalls(threadId)).toEqual(before.ledger);
      const after = await getRun();
      expect(after).toMatchObject({ status: "completed", worker_id: finishedBy });
      const streamAfter = (await readRunStream(server!.url, threadId, runId)).map((e) => e.event);
      expect(streamAfter).toHaveLength(before.events);
      expect(charges()).toHaveLength(1);
      expect(receipts()).toHaveLength(1);
      expect(receipts()[0]!.pid).not.toBe(cutPid);
      // It gave the run up; it did not crash.
      expect(cut!.process.child.exitCode).toBeNull();
      expect(cut!.process.child.signalCode).toBeNull();
      console.info(
        `worker-hosts: ${cutId} cut at ${cutAt}, restored at ${restoredAt}; it logged:\n` +
          cut!.process.stderr,
      );
    } finally {
      if (!restored) await cut!.host.restore().catch(() => {});
    }
  }, 180_000);
});
