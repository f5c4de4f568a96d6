import type { Context } from "@opentelemetry/api";
import type { CheckpointRead } from "../storage/checkpointer.js";

/**
 * What a host (the HTTP server, a background-run worker) steers a run with, beside the user's
 * `RunConfig`. Only `invokeAsHost` and `streamAsHost` of `@tenxgraph/core/host` pass them: an
 * agent author never sees them, and `invoke`/`stream` refuse them as unknown options.
 */
export interface HostControls {
  /**
   * Aborting it stops the run at the next node boundary: the node in flight finishes (its
   * tools are not cut off, so none is left in doubt), its step is written, and the run ends
   * `stopped` before the next node. `invoke(null)` continues it, in any process. For a worker
   * that shuts down and hands its runs to others.
   */
  drainSignal?: AbortSignal;
  /**
   * Aborting it abandons the run: it ends at once, like a stop, but writes no terminal status,
   * and `invoke` rejects with `RunAbandonedError` (`RUN_ABANDONED_001`). For a worker that
   * learns another has taken the run over (its lease ran out): the other execution's writes
   * fence any this one still had in flight. The abort reason, if a string or an Error, is
   * named in the error.
   */
  abandonSignal?: AbortSignal;
  /**
   * The thread as the host has just read it with `getCheckpointAndStops`, say to check who owns
   * the thread: the run starts from it instead of reading it again, and a stop requested after
   * that read stops the run. If a write landed in between, the run's first write fails with
   * `StaleStateError`, as in any race.
   */
  loadedThread?: CheckpointRead;
  /**
   * The OpenTelemetry context the run's span is a child of (default: the active context when
   * the run was called): the context of the request that queued a background run, say.
   */
  traceContext?: Context;
  /** The graph's id in the host's project, named in the run's span (`invoke_agent <graphId>`). */
  graphId?: string;
}

/** No controls: what `invoke` and `stream` run with. */
export const NO_HOST_CONTROLS: HostControls = Object.freeze({});
