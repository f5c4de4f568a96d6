import { serve as serveNode, type ServerType } from "@hono/node-server";
import type { Server } from "node:http";
import { createApp, type AppOptions, type TenxgraphApp } from "./app.js";
import { attachGraphSocket } from "../invoke/graph-socket.js";

/** Options of {@link serve}: the app's, plus where to listen. */
export interface ServeOptions extends AppOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8000; 0 picks a free port. */
  port?: number;
}

/** A listening server. */
export interface RunningServer {
  app: TenxgraphApp;
  /** The port it listens on (useful with port 0). */
  port: number;
  url: string;
  /**
   * Stops taking requests, lets runs and streams in progress end, then resolves. It does not
   * close the checkpointer: whoever opened it closes it.
   */
  close(): Promise<void>;
}

/**
 * Creates the app and listens on `host:port`.
 *
 * @example
 * const server = await serve({ graph, port: 8000 });
 * process.on("SIGTERM", () => server.close());
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const app = createApp(options);
  const host = options.host ?? "127.0.0.1";
  let server: ServerType | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    server = serveNode({ fetch: app.fetch, hostname: host, port: options.port ?? 8000 }, (info) =>
      resolve(info.port),
    );
    server.once("error", reject);
  });
  const sockets = attachGraphSocket(server as Server, app);
  return {
    app,
    port,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      app.context.closing.abort();
      sockets.close();
      await Promise.allSettled([...app.context.activeRuns]);
      (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      await closed;
    },
  };
}
