import type { Message } from "../messages/message.js";
import type { BaseState } from "../definition/reducers.js";
import type { Frontier } from "../storage/checkpointer.js";
import type { BreakpointPause, ParentHandoff } from "../storage/checkpoint-record.js";

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
  /**
   * The transcript the store holds for `version`, as references: what the next durable write
   * is diffed against (`diffTranscript`). Its own array, never `state.messages`.
   */
  durable: Message[];
  /** `durable.length`. */
  persisted: number;
  resumeAnswers: Record<string, unknown>;
  userId: string | null;
  /** Ids of the messages in the store: grows after each durable write. */
  persistedIds: Set<string>;
  /** The node whose step made `state`, until it is written; `null` for input or a status change. */
  node: string | null;
  /**
   * The version the next write continues when it is not `version`: the version a fork starts
   * from, until its first write. `null` otherwise.
   */
  forkOf: number | null;
  /** The thread's last static-breakpoint pause, written with every write (see `CheckpointRecord`). */
  breakpoint: BreakpointPause | null;
  /** A subgraph's handoff made by the step that ended the run, written with it; else absent. */
  handoff?: ParentHandoff;
}
