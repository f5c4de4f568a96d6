import { silentLogger, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import {
  PgRunStore,
  RunEventFollower,
  RunWorker,
  serve,
  type RunWorkerOptions,
  type RunningServer,
} from "@tenxgraph/server";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";

/** An API serving `graph` with background runs on a database of its own, and its parts. */
export interface RunsApi {
  /** The runs' (and their queue's) database. */
  dsn: string;
  store: PgRunStore;
  follower: RunEventFollower;
  server: RunningServer;
  /** The in-process worker, when asked for. */
  worker: RunWorker | null;
  /** Drains the worker, then closes the server and the runs' connections (not the graph's store). */
  close(): Promise<void>;
}

/**
 * `serve()` with background runs on a fresh database named after `name` (so tests never share
 * graphile-worker's queue), and an in-process worker with test timings unless `worker` is
 * `false`.
 */
export async function startRunsApi(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  graph: CompiledGraph<any>,
  name: string,
  options: { worker?: Partial<RunWorkerOptions> | false } = {},
): Promise<RunsApi> {
  const dsn = await freshDatabase(name);
  const store = new PgRunStore({ postgresDsn: dsn });
  await store.setup();
  const follower = new RunEventFollower(dsn);
  const worker =
    options.worker === false
      ? null
      : new RunWorker({
          graph: graph as CompiledGraph<BaseState>,
          store,
          heartbeatMs: 200,
          staleAfterMs: 1000,
          pollIntervalMs: 100,
          logger: silentLogger,
          ...options.worker,
        });
  await worker?.start();
  const server = await serve({ graph, port: 0, logger: silentLogger, runs: { store, follower } });
  return {
    dsn,
    store,
    follower,
    server,
    worker,
    async close() {
      await worker?.drain();
      await server.close();
      await follower.close();
      await store.close();
    },
  };
}
