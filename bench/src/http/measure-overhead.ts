import { TenxgraphClient } from "@tenxgraph/client";
import { Message } from "@tenxgraph/core";
import { p50p99, type P50P99 } from "./percentiles.js";
import type { HttpStore, OneStepServer } from "./one-step-server.js";

/** One path's time per invoke: wall clock, and CPU of this process (client and server both). */
export interface PathTimes {
  ms: P50P99;
  cpuMs: P50P99;
}

/** One invoke in process beside the same invoke through the server's app and over HTTP. */
export interface OverheadRow {
  store: HttpStore;
  /** Timed calls per path. */
  calls: number;
  /** `graph.invoke` in this process. */
  inProcess: PathTimes;
  /** The server's Hono app called in process (`app.request`): routing, validation, wire JSON; no socket, no client. */
  app: PathTimes;
  /** `client.invoke` over HTTP on 127.0.0.1: client, fetch, loopback TCP and the server. */
  http: PathTimes;
  /** `http` − `inProcess` per percentile: wall ms, and CPU ms. */
  overhead: P50P99;
  cpuOverhead: P50P99;
  /** `http` / `inProcess` wall time, per percentile. */
  ratio: P50P99;
}

/** One call of a path, on the thread it is given. */
type Call = (threadId: string) => Promise<void>;

/**
 * Timed rounds of one call per path, each on a fresh thread; the order rotates every round so
 * no path always runs first, last, on a warm cache or into a busy spell of the machine. CPU time
 * (`process.cpuUsage`, user + system) counts the client and the server alike (one process) and
 * moves far less than wall time with what else the machine runs.
 */
export async function measureOverhead(
  store: HttpStore,
  { graph, server }: OneStepServer,
  plan: { warmup: number; rounds: number },
): Promise<OverheadRow> {
  const client = new TenxgraphClient({ baseUrl: server.url });
  const paths: Call[] = [
    async (threadId) => {
      const result = await graph.invoke({ messages: [Message.user("hi")] }, { threadId });
      if (result.status !== "completed") throw new Error(`in-process run ${result.status}`);
    },
    async (threadId) => {
      const response = await server.app.request("/v1/graph/invoke", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          messages: [{ role: "user", content: "hi" }],
          config: { thread_id: threadId },
        }),
      });
      const body = (await response.json()) as { data?: { meta?: { status?: string } } };
      if (body.data?.meta?.status !== "completed") throw new Error(`app run ${response.status}`);
    },
    async (threadId) => {
      const result = await client.invoke("hi", { threadId });
      if (result.meta.status !== "completed") throw new Error(`HTTP run ${result.meta.status}`);
    },
  ];
  const wall: number[][] = paths.map(() => []);
  const cpu: number[][] = paths.map(() => []);
  let n = 0;
  const timeOne = async (path: number, keep: boolean) => {
    const threadId = `overhead-${n++}`;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await paths[path]!(threadId);
    const ms = performance.now() - t0;
    const used = process.cpuUsage(cpu0);
    if (keep) {
      wall[path]!.push(ms);
      cpu[path]!.push((used.user + used.system) / 1000);
    }
  };
  for (let round = 0; round < plan.warmup + plan.rounds; round++) {
    for (let k = 0; k < paths.length; k++)
      await timeOne((round + k) % paths.length, round >= plan.warmup);
  }
  const [inProcess, app, http] = paths.map((_, i) => ({
    ms: p50p99(wall[i]!),
    cpuMs: p50p99(cpu[i]!),
  })) as [PathTimes, PathTimes, PathTimes];
  return {
    store,
    calls: plan.rounds,
    inProcess,
    app,
    http,
    overhead: { p50: http.ms.p50 - inProcess.ms.p50, p99: http.ms.p99 - inProcess.ms.p99 },
    cpuOverhead: {
      p50: http.cpuMs.p50 - inProcess.cpuMs.p50,
      p99: http.cpuMs.p99 - inProcess.cpuMs.p99,
    },
    ratio: { p50: http.ms.p50 / inProcess.ms.p50, p99: http.ms.p99 / inProcess.ms.p99 },
  };
}
