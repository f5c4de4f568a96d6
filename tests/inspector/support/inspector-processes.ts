import { WorkerProcess } from "../../support/worker-process.js";
import type { InspectorServerParams } from "./inspector-server.js";

/** A server process and where it listens. */
export interface InspectorServerProcess {
  worker: WorkerProcess;
  base: string;
}

const SCRIPT = new URL("./inspector-server.ts", import.meta.url);

/** Starts an inspector server in a child process and waits until it listens. */
export async function startInspectorServer(
  params: InspectorServerParams,
): Promise<InspectorServerProcess> {
  const worker = new WorkerProcess(SCRIPT, params);
  const { port } = await worker.waitForType("listening", 60_000);
  return { worker, base: `http://127.0.0.1:${String(port)}` };
}

/** Stops a server process (SIGTERM, then it exits once its requests are done). */
export async function stopInspectorServer(server: InspectorServerProcess): Promise<void> {
  if (server.worker.child.exitCode === null && server.worker.child.signalCode === null) {
    server.worker.child.kill("SIGTERM");
  }
  await server.worker.exited;
}
