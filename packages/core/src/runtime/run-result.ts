import type { RunStatus } from "../events/stream-event.js";
import type { Command } from "../definition/command.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";
import type { Interrupt } from "../storage/checkpointer.js";

/** How `invoke` ends when it does not reject. */
export interface RunResult<S extends BaseState> {
  status: RunStatus;
  /** The whole state, transcript included, as committed. */
  state: S;
  /** Pending interrupts when `status` is `"interrupted"`, else empty. */
  interrupts: Interrupt[];
  threadId: string;
  runId: string;
  /** The thread's version after the run's last write. */
  version: number;
  /** The thread's step count after the run, as `getState` reports it. */
  step: number;
  /** The node the thread stands at (to run next); `null` once it reached END. */
  currentNode: string | null;
}

/**
 * Answers a pending interrupt: `invoke({ resume: answer, interruptId? }, { threadId })`; or
 * several at once with a map of answers by interrupt id, `{ resume: { [id]: answer } }` (a
 * `resume` object any of whose keys is a pending interrupt's id, without `interruptId`).
 */
export interface ResumeInput {
  resume: unknown;
  /** Required when several interrupts are pending and `resume` is not a map of answers. */
  interruptId?: string;
}

/**
 * What `invoke` and `stream` take: a state update to start a turn, a resume (`{ resume }` or
 * `new Command({ resume })`), or `null` to continue.
 */
export type RunInput<S extends BaseState> = StateUpdate<S> | ResumeInput | Command | null;

/** True for `{ resume }` input (so `resume` cannot be a state field name). */
export function isResumeInput(input: unknown): input is ResumeInput {
  return typeof input === "object" && input !== null && Object.hasOwn(input, "resume");
}
