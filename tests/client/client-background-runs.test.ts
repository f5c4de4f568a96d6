import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConflictError, TenxgraphClient } from "@tenxgraph/client";
import type { RunWorker, RunningServer } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../support/fresh-store.js";
import { openStore } from "../support/store-spec.js";
import { buildTestGraph } from "../server/support/test-graph.js";
import { startRunsApi, type RunsApi } from "../server/support/runs-api.js";
import { TRANSPORTS } from "./support/client-server.js";
import { startDroppingProxy } from "./support/dropping-proxy.js";

describe.each(TRANSPORTS)("the typed client's background runs over $label", (transport) => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-client-runs-"));
  const spec = freshStore("postgres", `client_background_runs_${transport.id}`, dir);
  const checkpointer = openStore(spec);
  // The model waits while the gate file is missing: a run can be held running on purpose.
  const gate = join(dir, "gate");
  writeFileSync(gate, "");
  const graph = buildTestGraph(
    { effectLog: join(dir, "effects.jsonl"), gateFile: gate },
    checkpointer,
  );
  let api: RunsApi;
  let worker: RunWorker;
  let server: RunningServer;
  let client: TenxgraphClient;

  beforeAll(async () => {
    api = await startRunsApi(graph, `client_background_runs_${transport.id}`);
    ({ server } = api);
    worker = api.worker!;
    client = new TenxgraphClient({ baseUrl: server.url, ...transport.options });
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  it("queues a run, streams it to its end, joins, reads and lists it", async () => {
    const queued = await client.createRun("c-1", "charge order 31");
    expect(queued).toMatchObject({ thread_id: "c-1", status: "pending" });
    const events = await client.streamRun("c-1", queued.run_id).toArray();
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)!.event).toEqual({ type: "run_status", status: "completed" });
    const joined = await client.joinRun("c-1", queued.run_id);
    expect(joined).toMatchObject({ status: "completed", attempts: 1, worker_id: worker.workerId });
    expect(await client.getRun("c-1", queued.run_id)).toEqual(joined);
    expect((await client.listRuns("c-1")).map((r) => r.run_id)).toEqual([queued.run_id]);
    const rest = await client.streamRun("c-1", queued.run_id, { lastEventId: 3 }).toArray();
    expect(rest).toEqual(events.slice(3));
  });

  it("resumes a dropped stream after the last event read: none lost, none repeated", async () => {
    const queued = await client.createRun("c-2", "charge order 32");
    const whole = await client.streamRun("c-2", queued.run_id).toArray();
    const proxy = await startDroppingProxy(server.url);
    try {
      const flaky = new TenxgraphClient({ baseUrl: proxy.url, ...transport.options });
      const resumed = await flaky.streamRun("c-2", queued.run_id).toArray();
      expect(proxy.dropped()).toBe(true);
      expect(resumed).toEqual(whole);
    } finally {
      await proxy.close();
    }
  });

  it("answers a busy thread with ConflictError THREAD_BUSY, and cancels a queued run", async () => {
    rmSync(gate);
    const first = await client.createRun("c-3", "charge order 33");
    const queued = await client.createRun("c-3", "charge order 34", {
      multitaskStrategy: "enqueue",
    });
    const refused = await client.createRun("c-3", "charge order 35").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ code: "THREAD_BUSY", status: 409 });
    expect((refused as Error).message).toContain(first.run_id);
    const cancelled = await client.cancelRun("c-3", queued.run_id);
    expect(cancelled).toMatchObject({ run_id: queued.run_id, status: "cancelled" });
    const again = await client.cancelRun("c-3", queued.run_id).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: "RUN_ENDED", status: 409 });
    writeFileSync(gate, "");
    expect((await client.joinRun("c-3", first.run_id)).status).toBe("completed");
  });
});
