import { measureFirstChunk, type FirstChunkRow } from "./measure-first-chunk.js";
import { measureHttpFloor } from "./measure-http-floor.js";
import { measureOverhead, type OverheadRow, type PathTimes } from "./measure-overhead.js";
import { measureThroughput, type ThroughputRow } from "./measure-throughput.js";
import { startOneStepServer, type HttpStore } from "./one-step-server.js";

/** How much of each HTTP measurement to take. */
export interface HttpPlan {
  stores: HttpStore[];
  warmup: number;
  /** Timed rounds for the overhead: one call per path (in process, app, HTTP) each. */
  rounds: number;
  clients: number;
  requestsPerClient: number;
  firstChunkSamples: number;
}

/** What the HTTP bench found, per store. */
export interface HttpResults {
  overhead: OverheadRow[];
  throughput: ThroughputRow[];
  firstChunk: FirstChunkRow[];
  /** fetch to a bare node:http server answering a constant: what HTTP costs here at the least. */
  floor: PathTimes;
  /** The same with a keep-alive `node:http` client, the transport `TenxgraphClient` uses in Node.js. */
  nodeHttpFloor: PathTimes;
}

/**
 * The HTTP API beside in-process calls on the same graph and store: overhead per invoke, requests
 * per second with many clients, and a stream's time to first chunk. A fresh server and store per
 * store kind; loopback only.
 */
export async function measureHttp(plan: HttpPlan): Promise<HttpResults> {
  const results: HttpResults = {
    overhead: [],
    throughput: [],
    firstChunk: [],
    floor: await measureHttpFloor(plan, "fetch"),
    nodeHttpFloor: await measureHttpFloor(plan, "node:http"),
  };
  for (const store of plan.stores) {
    const target = await startOneStepServer(store);
    try {
      results.overhead.push(await measureOverhead(store, target, plan));
      results.throughput.push(await measureThroughput(store, target, plan));
      results.firstChunk.push(
        await measureFirstChunk(store, target, {
          warmup: Math.min(plan.warmup, 20),
          samples: plan.firstChunkSamples,
        }),
      );
    } finally {
      await target.close();
    }
  }
  return results;
}
