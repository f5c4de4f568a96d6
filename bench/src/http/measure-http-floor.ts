import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { p50p99 } from "./percentiles.js";
import type { PathTimes } from "./measure-overhead.js";

/** The body a bare server answers with: about the size of a one-step invoke's answer. */
const BODY = JSON.stringify({
  data: { messages: [], meta: { status: "completed" } },
  metadata: {},
});

/**
 * The floor under any HTTP API here: Node's fetch POSTing a small JSON body to a bare
 * `node:http` server on 127.0.0.1 that answers a constant (no framework, no graph, no store).
 */
export async function measureHttpFloor(plan: {
  warmup: number;
  rounds: number;
}): Promise<PathTimes> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () =>
      response.writeHead(200, { "content-type": "application/json" }).end(BODY),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const wall: number[] = [];
  const cpu: number[] = [];
  try {
    for (let i = 0; i < plan.warmup + plan.rounds; i++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      await response.json();
      const ms = performance.now() - t0;
      const used = process.cpuUsage(cpu0);
      if (i >= plan.warmup) {
        wall.push(ms);
        cpu.push((used.user + used.system) / 1000);
      }
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { ms: p50p99(wall), cpuMs: p50p99(cpu) };
}
