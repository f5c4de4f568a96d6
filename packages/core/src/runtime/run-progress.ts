import type { BaseState } from "../graph/reducers.js";
import type { Frontier } from "../storage/checkpointer.js";

/** The thread as this run holds it between steps. */
export interface Progress<S extends BaseState> {
  version: number;
  /** The thread's life this run writes to: read with it, or minted for a thread it creates. */
  incarnation: string;
  step: number;
  currentNode: string | null;
  /** The tasks of the next step when it is more than `currentNode` (see `Frontier`). */
  frontier: Frontier | null;
  state: S;
  /** How many messages of `state.messages` the store already has. */
  persisted: number;
  resumeAnswers: Record<string, unknown>;
  userId: string | null;
  /** Ids of the messages in the store: grows after each durable write. */
  persistedIds: Set<string>;
}
