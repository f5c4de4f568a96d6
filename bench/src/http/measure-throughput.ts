import { TenxgraphClient } from "@tenxgraph/client";
import { p50p99, type P50P99 } from "./percentiles.js";
import type { HttpStore, OneStepServer } from "./one-step-server.js";

/** Requests per second with many clients invoking at once. */
export interface ThroughputRow {
  store: HttpStore;
  clients: number;
  requests: number;
  /** Requests that failed (a thrown error or a run that did not complete). Goal: none. */
  errors: number;
  /** The first few error messages, to say what went wrong. */
  errorSamples: string[];
  seconds: number;
  requestsPerSecond: number;
  /** ms per request as each client saw it. */
  latency: P50P99;
}

/**
 * `clients` loops, each with a client of its own, each invoking the one-step graph
 * `requestsPerClient` times back to back on threads of its own; all start together after a
 * warm-up pass. Every request counts, failed or not.
 */
export async function measureThroughput(
  store: HttpStore,
  { server }: OneStepServer,
  plan: { clients: number; requestsPerClient: number },
): Promise<ThroughputRow> {
  const clients = Array.from(
    { length: plan.clients },
    () => new TenxgraphClient({ baseUrl: server.url }),
  );
  await Promise.all(clients.map((c, i) => c.invoke("warm up", { threadId: `warm-${i}` })));
  const latencies: number[] = [];
  const errors: string[] = [];
  const started = performance.now();
  await Promise.all(
    clients.map(async (client, i) => {
      for (let r = 0; r < plan.requestsPerClient; r++) {
        const t0 = performance.now();
        try {
          const result = await client.invoke("hi", { threadId: `load-${i}-${r}` });
          if (result.meta.status !== "completed") errors.push(`status ${result.meta.status}`);
        } catch (error) {
          errors.push((error as Error).message);
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const requests = plan.clients * plan.requestsPerClient;
  return {
    store,
    clients: plan.clients,
    requests,
    errors: errors.length,
    errorSamples: [...new Set(errors)].slice(0, 3),
    seconds,
    requestsPerSecond: requests / seconds,
    latency: p50p99(latencies),
  };
}
