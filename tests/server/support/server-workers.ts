import { WorkerProcess } from "../../support/worker-process.js";
import type { ServerWorkerParams } from "./server-worker.js";

/** A server process and where it listens. */
export interface ServerProcess {
  worker: WorkerProcess;
  base: string;
}

const SCRIPT = new URL("./server-worker.ts", import.meta.url);

/** Starts a tenxgraph API server in a child process and waits until it listens. */
export async function startServerProcess(params: ServerWorkerParams): Promise<ServerProcess> {
  const worker = new WorkerProcess(SCRIPT, params);
  const { port } = await worker.waitForType("listening", 60_000);
  return { worker, base: `http://127.0.0.1:${String(port)}` };
}

/** Stops a server process (SIGTERM, then it exits after finishing requests). */
export async function stopServerProcess(server: ServerProcess): Promise<void> {
  if (server.worker.child.exitCode === null && server.worker.child.signalCode === null) {
    server.worker.child.kill("SIGTERM");
  }
  await server.worker.exited;
}
