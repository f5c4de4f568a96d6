import type { Logger } from "../events/logger.js";
import type { BaseState } from "../definition/reducers.js";
import type { GraphDefinition } from "../definition/graph-definition.js";
import type { RunServices } from "./run-services.js";

/** What a run needs from the compiled graph. */
export interface RunDependencies<S extends BaseState> extends RunServices {
  graph: GraphDefinition<S>;
  logger: Logger;
}
