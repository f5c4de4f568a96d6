import { loadProject } from "../project/load-project.js";
import { RunWorker } from "../background/run-worker.js";

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
  console.log(`tenxgraph: worker ${worker.workerId} taking runs (${project.configPath})`);
  onShutdown(async (signal) => {
    console.log(`tenxgraph: ${signal}: draining, running runs go back to the queue`);
    await worker.drain();
    await project.close();
  });
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
