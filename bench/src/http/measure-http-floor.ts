import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { p50p99 } from "./percentiles.js";
import type { PathTimes } from "./measure-overhead.js";

/** The body a bare server answers with: about the size of a one-step invoke's answer. */
const BODY = JSON.stringify({
  data: { messages: [], meta: { status: "completed" } },
  metadata: {},
});

/** How the floor's client POSTs: Node's fetch, or `node:http` on a keep-alive agent. */
export type FloorClient = "fetch" | "node:http";

/** One POST of `body` to `url` with `node:http` on `agent`, its answer read whole. */
function postWithNodeHttp(agent: Agent, url: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers = {
      "content-type": "application/json",
      accept: "application/json",
      "content-length": String(Buffer.byteLength(body)),
    };
    const sent = request(url, { method: "POST", headers, agent }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve(text));
      response.on("error", reject);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

/**
 * The floor under any HTTP API here: a client (Node's fetch, or `node:http` with keep-alive, as
 * `TenxgraphClient` sends in Node.js) POSTing a small JSON body to a bare `node:http` server on
 * 127.0.0.1 that answers a constant (no framework, no graph, no store).
 */
export async function measureHttpFloor(
  plan: { warmup: number; rounds: number },
  client: FloorClient = "fetch",
): Promise<PathTimes> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () =>
      response.writeHead(200, { "content-type": "application/json" }).end(BODY),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const agent = new Agent({ keepAlive: true });
  const wall: number[] = [];
  const cpu: number[] = [];
  try {
    for (let i = 0; i < plan.warmup + plan.rounds; i++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const body = JSON.stringify({ messages: [{ role: "user", content: "hi" }] });
      if (client === "node:http") {
        JSON.parse(await postWithNodeHttp(agent, url, body));
      } else {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body,
        });
        await response.json();
      }
      const ms = performance.now() - t0;
      const used = process.cpuUsage(cpu0);
      if (i >= plan.warmup) {
        wall.push(ms);
        cpu.push((used.user + used.system) / 1000);
      }
    }
  } finally {
    agent.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { ms: p50p99(wall), cpuMs: p50p99(cpu) };
}
