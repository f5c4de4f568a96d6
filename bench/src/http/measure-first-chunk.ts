import { TenxgraphClient } from "@tenxgraph/client";
import { Message } from "@tenxgraph/core";
import { p50p99, type P50P99 } from "./percentiles.js";
import type { HttpStore, OneStepServer } from "./one-step-server.js";

/** How long a stream takes to give its first chunk, over HTTP and in process. */
export interface FirstChunkRow {
  store: HttpStore;
  samples: number;
  /** ms from `client.stream(…)` to its first NDJSON chunk (the echo of the input message). */
  http: P50P99;
  /** ms from `graph.stream(…)` to its first event, for reference. */
  inProcess: P50P99;
}

/**
 * Alternating samples of both, each on a fresh thread, each read to its end so the next
 * starts on an idle server. The server answers once the run's first write is in (so a refused
 * run is still a JSON error), so the first chunk includes that write.
 */
export async function measureFirstChunk(
  store: HttpStore,
  { graph, server }: OneStepServer,
  plan: { warmup: number; samples: number },
): Promise<FirstChunkRow> {
  const client = new TenxgraphClient({ baseUrl: server.url });
  let n = 0;
  const overHttp = async () => {
    const started = performance.now();
    let first = Number.NaN;
    for await (const _ of client.stream("hi", { threadId: `ttfc-http-${n++}` }))
      if (Number.isNaN(first)) first = performance.now() - started;
    return first;
  };
  const inProcess = async () => {
    const started = performance.now();
    let first = Number.NaN;
    const input = { messages: [Message.user("hi")] };
    for await (const _ of graph.stream(input, { threadId: `ttfc-local-${n++}` }))
      if (Number.isNaN(first)) first = performance.now() - started;
    return first;
  };
  for (let i = 0; i < plan.warmup; i++) {
    await overHttp();
    await inProcess();
  }
  const remote: number[] = [];
  const local: number[] = [];
  for (let i = 0; i < plan.samples; i++) {
    remote.push(await overHttp());
    local.push(await inProcess());
  }
  return { store, samples: plan.samples, http: p50p99(remote), inProcess: p50p99(local) };
}
