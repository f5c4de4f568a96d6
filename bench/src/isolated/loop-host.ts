/**
 * The child side of {@link openIsolatedLoop}: opens one runtime's loop and runs it on request,
 * answering each run's `LoopRun` (timed here, in the child) over the IPC channel.
 *
 * Started by `fork` with `--import tsx`; its argument is the `HostSpec` as JSON.
 */
import type { LoopRun, Runtime, StoreSpec } from "../loop.js";
import { openLoop } from "../open-loop.js";
import type { Workload } from "../workload.js";

/** What the host opens. Only specs that travel as JSON (memory, SQLite) can be isolated. */
export interface HostSpec {
  runtime: Runtime;
  workload: Workload;
  spec: Extract<StoreSpec, { kind: "memory" | "sqlite" }>;
}

/** A request to the host, and its answer. */
export type HostRequest = { id: number; run: string } | { id: number; close: true };
export type HostAnswer = { id: number; run?: LoopRun; error?: string };

const { runtime, workload, spec } = JSON.parse(process.argv[2]!) as HostSpec;
const loop = await openLoop(runtime, workload, spec);
const send = (answer: HostAnswer) => process.send!(answer);

process.on("message", (request: HostRequest) => {
  void (async () => {
    try {
      if ("close" in request) {
        await loop.close();
        send({ id: request.id });
        process.disconnect();
        return;
      }
      send({ id: request.id, run: await loop.run(request.run) });
    } catch (error) {
      send({ id: request.id, error: error instanceof Error ? error.stack : String(error) });
    }
  })();
});
send({ id: 0 });
