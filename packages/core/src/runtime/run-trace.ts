import type { TraceScope } from "../events/tracing.js";
import type { BaseState } from "../definition/reducers.js";
import type { Progress } from "./run-progress.js";
import type { RunResult } from "./run-result.js";

/**
 * Runs `execute` under the run's span, which ends with the run: `tenxgraph.run.status` is how
 * it ended (`completed`, `interrupted`, `stopped`, or `failed` when it threw).
 */
export async function traceRun<S extends BaseState>(
  trace: TraceScope,
  execute: () => Promise<RunResult<S>>,
): Promise<RunResult<S>> {
  try {
    const result = await execute();
    if (trace.recording) trace.span.setAttribute("tenxgraph.run.status", result.status);
    trace.end();
    return result;
  } catch (error) {
    if (trace.recording) trace.span.setAttribute("tenxgraph.run.status", "failed");
    trace.fail(error);
    throw error;
  }
}

/** The step's node, or its tasks' nodes in task order (a fan-out step), for its span's name. */
export function stepLabel<S extends BaseState>(progress: Progress<S>): string {
  const { frontier } = progress;
  return frontier ? frontier.tasks.map((task) => task.node).join(", ") : progress.currentNode!;
}
