import type { BaseState, StateUpdate } from "../definition/reducers.js";
import type { StreamEvent } from "../events/stream-event.js";
import type { Interrupt, ThreadStatus } from "../storage/checkpointer.js";
import type { BreakpointPause } from "../storage/checkpoint-record.js";

/**
 * Every event of the run loop: the default {@link StreamEvent}s, plus those that only the other
 * stream modes show (`streamMode: "debug"` shows them all). The run loop sends each once; every
 * stream mode is a projection of them.
 */
export type RunEvent<S extends BaseState = BaseState> =
  | StreamEvent
  | {
      /** A step's node update, sent once the step is written (before its `state` event). */
      type: "update";
      node: string;
      update: StateUpdate<S>;
    }
  | {
      /**
       * The run's state once a write has taken it: after the start write (the input applied),
       * then after each step's write (after its `state` event).
       */
      type: "values";
      version: number;
      state: S;
    }
  | {
      /** What a node or one of its tools passed to `ctx.write(data)`. */
      type: "custom";
      node: string;
      data: unknown;
    }
  | {
      /** A task of a step starts (`tasks` mode): its id, node, input and what scheduled it. */
      type: "task_start";
      id: string;
      name: string;
      input: unknown;
      triggers: string[];
    }
  | {
      /**
       * A task of a step settled (`tasks` mode), before the step's write: its writes as
       * `[field, value]` pairs, its interrupts, or its error's text.
       */
      type: "task_result";
      id: string;
      name: string;
      result: [string, unknown][];
      interrupts: Interrupt[];
      error: string | null;
    }
  | {
      /** A durable write of the run (`checkpoints` mode), sent with its `state` event. */
      type: "checkpoint";
      checkpoint: CheckpointChunk<S>;
    };

/**
 * A checkpoint as `getState()` shows it (without `createdAt`, the store's time of the write, and
 * `subgraphs`), for the `checkpoints` stream mode.
 */
export interface CheckpointChunk<S extends BaseState = BaseState> {
  values: S;
  version: number;
  currentNode: string | null;
  next: string[];
  step: number;
  status: ThreadStatus;
  interrupts: Interrupt[];
  breakpoint: BreakpointPause | null;
  parentVersion: number | null;
  node: string | null;
  runId: string | null;
}

/** Hands an event of the run loop to its consumer; a no-op under `invoke()`. */
export type EmitRunEvent = (event: RunEvent) => void;
