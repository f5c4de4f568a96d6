import { loadProject } from "../project/load-project.js";
import { RunWorker } from "../background/run-worker.js";
import { serve } from "../app/serve.js";
import { CronScheduler } from "../schedules/cron-scheduler.js";
import { cronStore } from "../schedules/cron-store.js";
import { TimerScheduler } from "../timers/timer-scheduler.js";
import { queueTimer } from "../background/run-timers.js";
import { onShutdown, startDeliverer } from "./worker.js";

/** Where `api` and `dev` listen and which config they read. */
export interface ServeArgs {
  config: string | undefined;
  host: string;
  port: number;
  /**
   * Background-run workers in this process (`--workers N`); 0 makes a pure API node. Default:
   * 1 when runs are configured.
   */
  workers?: number | undefined;
  /** `--no-inspector`: do not serve the web inspector at `/inspector`. */
  noInspector?: boolean;
  /** `--trace-url`: where the inspector links a run's trace (over the config's `trace_url`). */
  traceUrl?: string | undefined;
}

/**
 * `tenxgraph api`: loads the project and serves it until SIGTERM/SIGINT, then stops taking
 * requests, drains its in-process workers, lets runs and streams in progress end, closes the
 * checkpointer and exits.
 */
export async function runApi(args: ServeArgs): Promise<void> {
  const project = await loadProject(process.cwd(), args.config);
  const inspector = project.options.inspector !== false && !args.noInspector;
  const traceUrl = args.traceUrl ?? project.options.traceUrl;
  const server = await serve({
    ...project.options,
    inspector,
    ...(traceUrl === undefined ? {} : { traceUrl }),
    host: args.host,
    port: args.port,
  });
  console.log(`tenxgraph: serving ${project.configPath} on ${server.url}`);
  if (inspector) console.log(`tenxgraph: inspector at ${server.url}/inspector/`);
  const workers = args.workers ?? (project.worker ? 1 : 0);
  let worker: RunWorker | null = null;
  if (workers > 0) {
    if (!project.worker) {
      throw new Error(
        `--workers ${workers}: no background runs configured: set runs.postgres_dsn (or TENXGRAPH_RUNS_DSN)`,
      );
    }
    worker = new RunWorker({ ...project.worker, concurrency: workers });
    await worker.start();
    console.log(`tenxgraph: worker ${worker.workerId} taking runs (concurrency ${workers})`);
  }
  const deliverer = startDeliverer(project);
  // Every API node runs the schedules: each tick is claimed in the database, started once.
  const scheduler = project.worker
    ? new CronScheduler({
        ctx: server.app.context,
        store: cronStore(project.worker.store.pool),
        logger: server.app.context.logger,
      })
    : null;
  scheduler?.start();
  // Durable timers (`ctx.sleep`): without a run queue they are resumed here (any number of API
  // processes may share the checkpointer: each resume is a compare-and-swap on the thread's
  // version); with one, threads paused outside background runs get the queue's delayed job.
  const runs = project.worker;
  const timers = new TimerScheduler({
    ctx: server.app.context,
    ...(runs ? { queue: (threadId: string) => queueTimer(runs.store, runs.graph, threadId) } : {}),
  });
  timers.start();
  onShutdown(async (signal) => {
    console.log(`tenxgraph: ${signal}: finishing requests in progress`);
    await timers.stop();
    await Promise.all([worker?.drain(), server.close(), deliverer?.stop(), scheduler?.stop()]);
    await project.close();
  });
}
