import type { HttpPlan } from "./measure-http.js";

/** The HTTP bench's sizes: the full run, or `--quick` (a smoke run for CI). */
export function httpPlan(quick: boolean): HttpPlan {
  return {
    stores: ["memory", "sqlite"],
    warmup: quick ? 30 : 200,
    rounds: quick ? 200 : 2000,
    clients: 64,
    requestsPerClient: quick ? 5 : 30,
    firstChunkSamples: quick ? 50 : 300,
  };
}
