import type { BaseState, StateUpdate } from "../definition/reducers.js";
import type { StreamEvent } from "../events/stream-event.js";

/**
 * Every event of the run loop: the default {@link StreamEvent}s, plus three that only the other
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
    };

/** Hands an event of the run loop to its consumer; a no-op under `invoke()`. */
export type EmitRunEvent = (event: RunEvent) => void;
