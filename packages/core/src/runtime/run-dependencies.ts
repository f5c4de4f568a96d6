import type { Logger } from "../events/logger.js";
import type { BaseState } from "../graph/reducers.js";
import type { GraphDefinition } from "../graph/graph-definition.js";
import type { RunServices } from "./run-services.js";

/** What a run needs from the compiled graph. */
export interface RunDependencies<S extends BaseState> extends RunServices {
  graph: GraphDefinition<S>;
  logger: Logger;
}
