import { jsonLogger } from "@tenxgraph/core";
import { loadProject, type LoadedProject } from "../project/load-project.js";
import { RunWorker } from "../background/run-worker.js";
import { WebhookDeliverer } from "../webhooks/webhook-deliverer.js";

/** `tenxgraph worker`: which config to read and how many runs at once. */
export interface WorkerArgs {
  config: string | undefined;
  concurrency: number | undefined;
}

/**
 * `tenxgraph worker`: takes background runs from the queue until SIGTERM/SIGINT, then drains
 * (running runs stop at their next node boundary and go back to the queue for another worker),
 * closes its connections and exits.
 */
export async function runWorker(args: WorkerArgs): Promise<void> {
  const project = await loadProject(process.cwd(), args.config);
  if (!project.worker) {
    await project.close();
    throw new Error(
      `${project.configPath}: no background runs configured: set runs.postgres_dsn (or TENXGRAPH_RUNS_DSN)`,
    );
  }
  const worker = new RunWorker({
    ...project.worker,
    ...(args.concurrency === undefined ? {} : { concurrency: args.concurrency }),
  });
  await worker.start();
  const deliverer = startDeliverer(project);
  console.log(`tenxgraph: worker ${worker.workerId} taking runs (${project.configPath})`);
  onShutdown(async (signal) => {
    console.log(`tenxgraph: ${signal}: draining, running runs go back to the queue`);
    await Promise.all([worker.drain(), deliverer?.stop()]);
    await project.close();
  });
}

/**
 * Sends the webhook outbox from this process too, when webhooks and runs are configured: any
 * number of processes may, each delivery is taken by one attempt at a time.
 */
export function startDeliverer(project: LoadedProject): WebhookDeliverer | null {
  if (!project.webhooks || !project.worker) return null;
  const deliverer = new WebhookDeliverer({
    pool: project.worker.store.pool,
    settings: project.webhooks,
    logger: project.options.logger ?? jsonLogger(),
  });
  deliverer.start();
  return deliverer;
}

/** Runs `shutdown` once on the first SIGTERM or SIGINT, then exits (1 if it failed). */
export function onShutdown(shutdown: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    shutdown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error("tenxgraph: shutdown failed:", error);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => handle("SIGTERM"));
  process.once("SIGINT", () => handle("SIGINT"));
}
