import type { MessageInput, WireMessage } from "./wire-message.js";
import type { Interrupt, WireState } from "./wire-state.js";

/** How much a run answers: `low` its messages; `partial` also the transcript; `full` also the state. */
export type Granularity = "low" | "partial" | "full";

/**
 * What a run starts from: new input (a user's text, a message, messages), the answer to an
 * interrupt, or `{ continue: true }` to pick up an unfinished run (after a crash or a stop).
 */
export type InvokeInput =
  | string
  | MessageInput
  | MessageInput[]
  | { resume: unknown; interruptId?: string }
  | { continue: true };

/** Options of a run (`invoke`, `stream`, `resume`, `continueRun`). */
export interface RunOptions {
  /** The thread; a new one is made (its id is in the answer) when absent. */
  threadId?: string;
  /** Other run settings: `node_timeout`, `tool_timeout` (seconds), `durable_checkpoint_every_step`. */
  config?: Record<string, unknown>;
  /** Fields of the state to set for a new turn (not `messages`, `context`, `execution_meta`). */
  initialState?: Record<string, unknown>;
  /** 1..100 (server default 25). */
  recursionLimit?: number;
  /**
   * Fork: run from this past version of the thread (see `getStateHistory`) as a new branch;
   * the versions after it stay in the history. Sent as `config.from_version`.
   */
  fromVersion?: number;
  /** Server default `low`. */
  granularity?: Granularity;
  /** Aborts the request (and closes a stream). The run itself goes on unless it was a stream. */
  signal?: AbortSignal;
}

/** How a run ended without an error. */
export type RunStatus = "completed" | "interrupted" | "stopped";

/** `meta` of a run's answer. */
export interface RunMeta {
  thread_id: string;
  is_new_thread: boolean;
  run_id: string;
  status: RunStatus;
  /** The thread's version after the run's last write. */
  version: number;
  /** Pending interrupts when `status` is `interrupted`. */
  interrupts: Interrupt[];
  thread_name?: string;
}

/** The answer to `invoke` (and `resume`, `continueRun`). */
export interface InvokeResult {
  /** This run's messages: the input first, then what the nodes added. */
  messages: WireMessage[];
  meta: RunMeta;
  /** The whole transcript (`partial` and `full`). */
  context?: WireMessage[];
  summary?: string | null;
  /** The thread's state after the run (`full`). */
  state?: WireState | null;
}

/** The answer to `stop`. `ok` is false when the thread does not exist. */
export interface StopResult {
  ok: boolean;
  running: boolean;
  reason?: "no-state" | "not-running";
  success: boolean;
  message: string;
  thread_id: string;
  status: "stop_requested" | "not_running" | "no_state";
}
