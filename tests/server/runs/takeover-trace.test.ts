/**
 * A background run's trace crosses processes: the POST's `traceparent` is kept in the queued
 * run, so the spans of the worker that takes the run over from a dead one join the POST's trace.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { propagation } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { silentLogger, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import { RunWorker } from "@tenxgraph/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testTracer } from "../../../packages/core/src/support/test-tracer.js";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore } from "../../support/store-spec.js";
import { WorkerProcess } from "../../support/worker-process.js";
import { caller, userMessage } from "../support/http.js";
import type { RunWorkerParams } from "../support/run-worker.js";
import { startRunsApi, type RunsApi } from "../support/runs-api.js";
import { buildTestGraph } from "../support/test-graph.js";
import { until } from "../../support/until.js";

const RUN_WORKER = new URL("../support/run-worker.ts", import.meta.url);

describe("the trace of a background run taken over by a second worker", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-takeover-trace-"));
  const spec = freshStore("postgres", "takeover_trace", dir);
  const effectLog = join(dir, "effects.jsonl");
  const gate = join(dir, "gate");
  const checkpointer = openStore(spec);
  const spans = testTracer();
  const graph = buildTestGraph({ effectLog, gateFile: gate }, checkpointer, silentLogger, {
    tracer: spans.tracer,
  });
  let api: RunsApi;
  let dead: WorkerProcess | null = null;
  let survivor: RunWorker | null = null;

  beforeAll(async () => {
    // The W3C propagator, as an app's OpenTelemetry SDK registers it.
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    api = await startRunsApi(graph, "takeover_trace", { worker: false });
  }, 60_000);

  afterAll(async () => {
    propagation.disable();
    await dead?.kill();
    await survivor?.drain();
    await api?.close();
    await checkpointer.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  it("shares the trace id of the POST that queued it", async () => {
    const params: RunWorkerParams = {
      store: spec,
      runsDsn: api.dsn,
      effectLog,
      gateFile: gate,
      workerId: "doomed",
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
    };
    dead = new WorkerProcess(RUN_WORKER, params);
    await dead.waitForType("ready", 60_000);
    const traceId = randomBytes(16).toString("hex");
    const postSpanId = randomBytes(8).toString("hex");
    const posted = await caller(api.server.url)(
      "POST",
      "/v1/threads/t-trace/runs",
      { messages: [userMessage("charge order 71")] },
      { traceparent: `00-${traceId}-${postSpanId}-01` },
    );
    expect(posted.status, posted.text).toBe(202);
    const runId = posted.body.data.run_id as string;
    const queued = await api.store.getRun(runId);
    expect(queued?.request.trace?.traceparent).toBe(`00-${traceId}-${postSpanId}-01`);
    await until(
      async () => (await api.store.getRun(runId))?.status === "running",
      "the doomed worker to hold the run",
    );
    expect((await dead.kill()).signal).toBe("SIGKILL");

    writeFileSync(gate, "");
    survivor = new RunWorker({
      graph: graph as unknown as CompiledGraph<BaseState>,
      graphId: "support",
      store: api.store,
      heartbeatMs: 200,
      staleAfterMs: 1000,
      pollIntervalMs: 100,
      logger: silentLogger,
    });
    await survivor.start();
    const ended = await until(async () => {
      const run = await api.store.getRun(runId);
      return run && !["pending", "running"].includes(run.status) ? run : null;
    }, "the run to end");
    expect(ended).toMatchObject({ status: "completed", attempts: 2 });

    // The worker names its graph: the run's span is named for it, as an in-process run's is.
    const run = spans.span("invoke_agent support");
    expect(run.spanContext().traceId).toBe(traceId);
    expect(run.parentSpanContext?.spanId).toBe(postSpanId);
    expect(run.attributes).toMatchObject({
      "tenxgraph.thread.id": "t-trace",
      "tenxgraph.graph": "support",
      "tenxgraph.run.status": "completed",
    });
    const names = spans.spans().map((span) => span.name);
    expect(names).toEqual(expect.arrayContaining(["step MAIN", "execute_tool charge_card"]));
    expect(new Set(spans.spans().map((span) => span.spanContext().traceId))).toEqual(
      new Set([traceId]),
    );
  });
});
