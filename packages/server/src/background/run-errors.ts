import { TenxgraphError } from "@tenxgraph/core";
import type { BackgroundRunStatus } from "./run-record.js";

/**
 * A new run on a thread whose active run the strategy (`reject`) does not let it pass
 * (`RUNS_001`; the API answers 409 `THREAD_BUSY`).
 */
export class ThreadBusyError extends TenxgraphError {
  constructor(
    readonly threadId: string,
    readonly activeRunId: string,
  ) {
    super(
      "RUNS_001",
      `Thread '${threadId}' already has an active run (${activeRunId}); send ` +
        `multitask_strategy "enqueue" to run after it or "interrupt" to stop it first`,
    );
  }
}

/** A cancel or other change asked of a run that has already ended (`RUNS_002`; 409 `RUN_ENDED`). */
export class RunEndedError extends TenxgraphError {
  constructor(
    readonly runId: string,
    readonly status: BackgroundRunStatus,
  ) {
    super("RUNS_002", `Run '${runId}' has already ended (${status})`);
  }
}
