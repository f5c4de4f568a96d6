import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/** A loopback TCP proxy in front of a server; see {@link startDroppingProxy}. */
export interface DroppingProxy {
  url: string;
  /** True once a stream was cut. */
  dropped(): boolean;
  close(): Promise<void>;
}

/**
 * A proxy that cuts the first connection asking for a `/stream` path once the first
 * Server-Sent Event of its answer has gone through, as a dropped connection would. It works at
 * the TCP level, so it cuts fetch and `node:http` alike.
 */
export async function startDroppingProxy(target: string): Promise<DroppingProxy> {
  const { hostname, port } = new URL(target);
  let dropped = false;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let cutting = false;
    let answered = "";
    client.on("data", (bytes: Buffer) => {
      if (!dropped && /^GET [^ ]*\/stream/m.test(bytes.toString("latin1"))) cutting = true;
      upstream.write(bytes);
    });
    upstream.on("data", (bytes: Buffer) => {
      client.write(bytes);
      if (!cutting) return;
      answered += bytes.toString("latin1");
      if (!answered.includes("\n\n")) return;
      dropped = true;
      cutting = false;
      client.resetAndDestroy();
      upstream.destroy();
    });
    for (const socket of [client, upstream]) {
      socket.on("error", () => undefined);
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    dropped: () => dropped,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
