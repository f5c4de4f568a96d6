import type { RuntimeMetrics } from "../events/metrics.js";
import type { RuntimeTracing } from "../events/tracing.js";
import type { IdGenerator } from "../messages/ids.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import type { FaultInjector } from "../node/fault-points.js";
import type { Store } from "../store/store.js";

/**
 * What a run needs from its runtime besides its graph and logger: the part a subgraph's child
 * run shares with its parent's run.
 */
export interface RunServices {
  checkpointer: Checkpointer;
  /** `compile({ store })`, else one failing every call; a subgraph's child run shares it. */
  store: Store;
  metrics: RuntimeMetrics;
  tracing: RuntimeTracing;
  ids: IdGenerator;
  faultPoints: FaultInjector | undefined;
  stopPollIntervalMs: number;
  claimStaleAfterMs: number;
  isEndedLocalRun(runId: string): boolean;
}
