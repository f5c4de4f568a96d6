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

/** A worker on `graph` with the tests' timings (a heartbeat every 200 ms), not started. */
export function testWorker(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  graph: CompiledGraph<any>,
  store: PgRunStore,
  options: Partial<RunWorkerOptions> = {},
): RunWorker {
  return new RunWorker({
    graph: graph as CompiledGraph<BaseState>,
    store,
    heartbeatMs: 200,
    staleAfterMs: 1000,
    pollIntervalMs: 100,
    logger: silentLogger,
    ...options,
  });
}

/** `work` with a {@link testWorker} taking runs, drained after. */
export async function withTestWorker<T>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  graph: CompiledGraph<any>,
  store: PgRunStore,
  work: () => Promise<T>,
  options: Partial<RunWorkerOptions> = {},
): Promise<T> {
  const worker = testWorker(graph, store, options);
  await worker.start();
  try {
    return await work();
  } finally {
    await worker.drain();
  }
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
  const worker = options.worker === false ? null : testWorker(graph, store, options.worker);
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
