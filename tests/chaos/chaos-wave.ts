import { setTimeout as sleep } from "node:timers/promises";
import type { CrashScene, WorkerRun } from "../crash/support/crash-scene.js";
import type { WorkerProcess } from "../support/worker-process.js";
import type { WaveProcess } from "./wave-plan.js";

/** What a wave's processes did, however they ended. */
export interface WaveOutcome {
  runs: WorkerRun[];
  /** Processes that were SIGSTOPped (then killed or let go). */
  stopped: number;
  startedAt: number;
  endedAt: number;
}

/** Waited for a message a disruption is aimed at; a worker gone first is simply not disrupted. */
const AIM_TIMEOUT_MS = 60_000;

/**
 * Starts the wave's processes on the thread together (each `staggerMs[i]` after the first) and
 * disrupts each as planned: a hung tool is killed once it hangs, a process to kill "anytime" is
 * SIGKILLed a moment after its first committed write, a frozen one is SIGSTOPped then and later
 * SIGKILLed or let go on (SIGCONT). Resolves once every process is gone.
 */
export async function runWave(
  scene: CrashScene,
  processes: readonly WaveProcess[],
  wave: string,
  staggerMs: readonly number[],
): Promise<WaveOutcome> {
  const startedAt = Date.now();
  let stopped = 0;
  const settled = await Promise.allSettled(
    processes.map(async (params, i) => {
      await sleep(staggerMs[i] ?? 0);
      const { worker, finished: ended } = scene.start(params, wave);
      const finished = ended.catch((error: unknown) => {
        const reported = worker.messages.map((m) => m.type).join(" ");
        const what = `${params.via} ${params.input.kind} ${JSON.stringify(planned(params))}`;
        throw new Error(`${what}: ${String(error)}\nreported: ${reported}`, { cause: error });
      });
      // Observed below, once the disruption is done; until then a rejection is not unhandled.
      finished.catch(() => {});
      if (await disrupt(worker, params)) stopped += 1;
      return finished;
    }),
  );
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason; // a worker stuck past its deadline
  const runs = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  return { runs, stopped, startedAt, endedAt: Date.now() };
}

/**
 * Carries out the process's planned disruption; true when it was SIGSTOPped. Aimed at this run
 * only: a process that served it goes on to other runs, which a late signal must not hit.
 */
async function disrupt(worker: WorkerProcess, params: WaveProcess): Promise<boolean> {
  const { hang, outsideKillMs, freeze } = params;
  const job = worker.messages;
  const running = () =>
    worker.messages === job &&
    !job.some((m) => m.type === "served") &&
    worker.child.exitCode === null &&
    worker.child.signalCode === null;
  const aimed = (type: string) =>
    worker
      .waitFor((m) => m.type === type || m.type === "served", AIM_TIMEOUT_MS)
      .then(
        () => running(),
        () => false, // it exited first
      );
  if (hang !== undefined) {
    if (await aimed("hanging")) await worker.kill();
    return false;
  }
  if (outsideKillMs !== undefined) {
    if (!(await aimed("write"))) return false;
    await sleep(outsideKillMs);
    if (running()) await worker.kill();
    return false;
  }
  if (!freeze || !(await aimed("write"))) return false;
  await sleep(freeze.afterMs);
  if (!running()) return false;
  worker.child.kill("SIGSTOP");
  await sleep(freeze.forMs);
  if (freeze.then === "kill") await worker.kill();
  else worker.child.kill("SIGCONT");
  return true;
}

/** The disruption fields of a process's params, for a failure message. */
function planned(params: WaveProcess): object {
  const { kill, hang, outsideKillMs, freeze } = params;
  return { kill, hang, outsideKillMs, freeze };
}
