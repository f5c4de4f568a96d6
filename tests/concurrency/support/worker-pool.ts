import { WorkerProcess } from "../../support/worker-process.js";

/**
 * Starts one worker per entry of `params` from `script` (a file in this folder) and waits until
 * each has reported `ready`: workers start in parallel because each start costs about half a
 * second, and no test releases its workers before all of them are listening. Starting many on
 * few cores takes longer: `readyTimeoutMs` (default 15 s) bounds the wait.
 */
export async function startWorkers(
  script: string,
  params: readonly unknown[],
  readyTimeoutMs?: number,
): Promise<WorkerProcess[]> {
  const url = new URL(script, import.meta.url);
  const workers = params.map((param) => new WorkerProcess(url, param));
  try {
    await Promise.all(workers.map((worker) => worker.waitForType("ready", readyTimeoutMs)));
  } catch (error) {
    await killWorkers(workers);
    throw error;
  }
  return workers;
}

/**
 * SIGKILLs every worker still alive and waits for their exits; for `afterAll`, where a worker
 * may be missing because starting it failed.
 */
export async function killWorkers(workers: readonly (WorkerProcess | undefined)[]): Promise<void> {
  await Promise.all(workers.map((worker) => worker?.kill()));
}
