import type { Logger } from "../events/logger.js";
import type { RuntimeMetrics } from "../events/metrics.js";
import type { BaseState } from "../graph/reducers.js";
import type { GraphDefinition } from "../graph/graph-definition.js";
import type { IdGenerator } from "../messages/ids.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import type { FaultInjector } from "./fault-points.js";

/** What a run needs from the compiled graph. */
export interface RunDependencies<S extends BaseState> {
  graph: GraphDefinition<S>;
  checkpointer: Checkpointer;
  logger: Logger;
  metrics: RuntimeMetrics;
  ids: IdGenerator;
  faultPoints: FaultInjector | undefined;
  stopPollIntervalMs: number;
  claimStaleAfterMs: number;
  isEndedLocalRun(runId: string): boolean;
}
