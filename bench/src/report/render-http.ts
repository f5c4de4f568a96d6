import type { HttpPlan, HttpResults } from "../http/measure-http.js";
import { fixed, table, times, whole, yesNo } from "./format.js";

/** The HTTP API's performance goals. */
const GOALS = {
  /** p50 of HTTP invoke minus p50 of the in-process invoke, ms. */
  maxOverheadMsP50: 1,
  /** Failed requests with 64 concurrent clients. */
  maxErrors: 0,
};

const STORE_NAMES = { memory: "in-memory", sqlite: "SQLite (FULL)" } as const;

function pair(v: { p50: number; p99: number }, digits: number): string {
  return `${fixed(v.p50, digits)} / ${fixed(v.p99, digits)}`;
}

/** The HTTP section: overhead per invoke, requests per second, time to first chunk, goals. */
export function renderHttp(http: HttpResults, plan: HttpPlan): string[] {
  const overheads = http.overhead.map((r) => r.overhead.p50);
  const errors = http.throughput.reduce((sum, r) => sum + r.errors, 0);
  return [
    "## HTTP API: `@tenxgraph/client` → `@tenxgraph/server` beside in-process calls",
    "",
    ...table(
      ["goal", "figures", "met"],
      [
        [
          `HTTP overhead per invoke under ${GOALS.maxOverheadMsP50} ms at p50`,
          http.overhead
            .map(
              (r) =>
                `${STORE_NAMES[r.store]} ${fixed(r.overhead.p50, 2)} ms (CPU ${fixed(r.cpuOverhead.p50, 2)} ms)`,
            )
            .join("; "),
          yesNo(overheads.length > 0 && overheads.every((v) => v < GOALS.maxOverheadMsP50)),
        ],
        [
          `No errors with ${plan.clients} concurrent clients`,
          http.throughput
            .map((r) => `${STORE_NAMES[r.store]} ${r.errors} of ${r.requests}`)
            .join("; "),
          yesNo(errors <= GOALS.maxErrors),
        ],
      ],
    ),
    "",
    "Overhead per invoke (one caller, one one-step run at a time, the three paths taking turns);",
    "wall ms, and CPU ms of the process (client and server both):",
    "",
    ...table(
      [
        "store",
        "calls per path",
        "in-process p50 / p99 ms",
        "app, no socket p50 / p99 ms",
        "HTTP p50 / p99 ms",
        "HTTP overhead p50 / p99 ms",
        "HTTP / in-process p50 / p99",
        "CPU ms p50: in-process / app / HTTP",
        "HTTP CPU overhead p50 ms",
      ],
      http.overhead.map((r) => [
        STORE_NAMES[r.store],
        `${r.calls}`,
        pair(r.inProcess.ms, 3),
        pair(r.app.ms, 3),
        pair(r.http.ms, 3),
        pair(r.overhead, 3),
        `${times(r.ratio.p50)} / ${times(r.ratio.p99)}`,
        `${fixed(r.inProcess.cpuMs.p50, 3)} / ${fixed(r.app.cpuMs.p50, 3)} / ${fixed(r.http.cpuMs.p50, 3)}`,
        fixed(r.cpuOverhead.p50, 3),
      ]),
    ),
    "",
    `Floor: a client POSTing to a bare \`node:http\` server on 127.0.0.1 that answers a constant: with keep-alive \`node:http\` (as \`TenxgraphClient\` in Node.js) p50 / p99 ${pair(http.nodeHttpFloor.ms, 3)} ms wall, CPU p50 ${fixed(http.nodeHttpFloor.cpuMs.p50, 3)} ms; with Node's fetch p50 / p99 ${pair(http.floor.ms, 3)} ms wall, CPU p50 ${fixed(http.floor.cpuMs.p50, 3)} ms.`,
    "",
    `Throughput, ${plan.clients} clients at once, each invoking back to back:`,
    "",
    ...table(
      ["store", "requests", "errors", "seconds", "requests/s", "latency p50 / p99 ms"],
      http.throughput.map((r) => [
        STORE_NAMES[r.store],
        `${r.requests}`,
        r.errors === 0 ? "0" : `${r.errors} (${r.errorSamples.join("; ")})`,
        fixed(r.seconds, 2),
        whole(r.requestsPerSecond),
        `${fixed(r.latency.p50, 2)} / ${fixed(r.latency.p99, 2)}`,
      ]),
    ),
    "",
    "NDJSON stream, time to first chunk (HTTP) beside time to first event (in process):",
    "",
    ...table(
      ["store", "samples", "HTTP p50 / p99 ms", "in-process p50 / p99 ms"],
      http.firstChunk.map((r) => [
        STORE_NAMES[r.store],
        `${r.samples}`,
        pair(r.http, 3),
        pair(r.inProcess, 3),
      ]),
    ),
    "",
    "How: one graph with one node (an assistant message, then END) on a fresh store per row,",
    "served by `serve()` on 127.0.0.1 in the bench's own process (no auth), so both paths share",
    "the graph, the store and the event loop; every call is a fresh thread and its one durable",
    "write. HTTP calls go through `TenxgraphClient` (keep-alive `node:http`), so the overhead",
    "is the whole round trip: client, JSON both ways, loopback TCP, the server's routing,",
    "validation, ownership check and wire conversion. Overhead: after " +
      `${plan.warmup} warm-up rounds, ${plan.rounds} timed rounds of one call of each path (an in-process`,
    "`graph.invoke`; the server's Hono app called in process with `app.request`, which is the",
    "server's own work without a socket or a client; and `client.invoke`), the order rotating every",
    "round; the overhead is each percentile of HTTP minus the same percentile in process. CPU is",
    "`process.cpuUsage()` around each call (user + system, the whole process: client and server),",
    "which moves much less than wall time with other work on a shared machine.",
    `Throughput: ${plan.clients} clients (one \`TenxgraphClient\` each) start`,
    `together after one warm-up call each and make ${plan.requestsPerClient} invokes each back to back; an error is any`,
    "request that throws or does not complete. First chunk: from `client.stream()` to its first",
    "chunk (the server answers once the run's first write is in), read to the end before the next.",
  ];
}
