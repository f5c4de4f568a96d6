import type { BaseState } from "../definition/reducers.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunDependencies } from "./run-dependencies.js";
import { Run, type RunEventSink } from "./run-loop.js";
import type { RunInput, RunResult } from "./run-result.js";
import { AbandonSignal, StopSignal } from "./stop-signal.js";

/**
 * Runs the run loop once, with the config's signals wired to `abort`: `signal` stops the run
 * cleanly (the thread is left `stopped`), `abandonSignal` abandons it (nothing more is written).
 * The one way a run starts, for `invoke` and `stream` and for a subgraph's run inside a node.
 */
export async function executeRun<S extends BaseState>(
  deps: RunDependencies<S>,
  config: ResolvedRunConfig,
  input: RunInput<S>,
  send: RunEventSink,
  abort: AbortController,
  runId: string,
): Promise<RunResult<S>> {
  const external = config.signal;
  const onExternalAbort = () => abort.abort(new StopSignal("signal"));
  if (external?.aborted) onExternalAbort();
  external?.addEventListener("abort", onExternalAbort, { once: true });
  const abandon = config.abandonSignal;
  const onAbandon = () => abort.abort(new AbandonSignal(abortReasonText(abandon!.reason)));
  if (abandon?.aborted) onAbandon();
  abandon?.addEventListener("abort", onAbandon, { once: true });
  try {
    return await new Run(deps, config, send, abort, runId).execute(input);
  } finally {
    external?.removeEventListener("abort", onExternalAbort);
    abandon?.removeEventListener("abort", onAbandon);
  }
}

/** What an abort reason says, for the abandoned run's error. */
function abortReasonText(reason: unknown): string {
  if (typeof reason === "string") return reason;
  if (reason instanceof Error) return reason.message;
  return "abandonSignal aborted";
}
