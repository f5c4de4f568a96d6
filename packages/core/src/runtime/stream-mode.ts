import { InvalidRunError } from "../errors/errors.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";
import type { Message } from "../messages/message.js";
import type { Interrupt } from "../storage/checkpointer.js";
import type { RunConfig } from "./run-config.js";
import type { CheckpointChunk, RunEvent } from "./run-event.js";
import type { StreamEvent } from "../events/stream-event.js";

/** What `stream()` yields: one projection of the run loop's events (see {@link StreamChunks}). */
export type StreamMode =
  "events" | "values" | "updates" | "messages" | "custom" | "tasks" | "checkpoints" | "debug";

/** Every stream mode, in the order the docs list them. */
export const STREAM_MODES: readonly StreamMode[] = [
  "events",
  "values",
  "updates",
  "messages",
  "custom",
  "tasks",
  "checkpoints",
  "debug",
];

/** `streamMode`: one mode (its chunks), or several (`[mode, chunk]` tuples). */
export type StreamModeOption = StreamMode | readonly StreamMode[];

/**
 * A `messages` chunk: a token delta of a model reply, or a whole message once its step is
 * written (model replies, tool results), with the node and step that made it.
 */
export type MessagesChunk = [
  (
    | { type: "message_delta"; messageId: string; delta: string }
    | { type: "message"; message: Message }
  ),
  { node: string; step: number },
];

/**
 * A `debug` chunk: every event of the run loop, `update`, `values` and `custom` included, with
 * the step it belongs to (`null` before the run started) and when it was sent (ISO 8601).
 */
export interface DebugChunk<S extends BaseState = BaseState> {
  step: number | null;
  timestamp: string;
  event: RunEvent<S>;
}

/**
 * A `tasks` chunk, as LangGraph.js's: a task of a step starts, or it settled (its writes as
 * `[field, value]` pairs, the interrupts it raised, its error's text).
 */
export type TasksChunk =
  | { id: string; name: string; input: unknown; triggers: string[] }
  | {
      id: string;
      name: string;
      result: [string, unknown][];
      interrupts: Interrupt[];
      error: string | null;
    };

/** The chunk each stream mode yields, for a graph of state `S`. */
export interface StreamChunks<S extends BaseState> {
  /** The default: today's events, unchanged. */
  events: StreamEvent;
  /** The state once the start write took the input, then after each step's write. */
  values: S;
  /** Each step's node update, keyed by the node: `{ [node]: update }`. */
  updates: Record<string, StateUpdate<S>>;
  messages: MessagesChunk;
  /** Whatever nodes and tools pass to `ctx.write(data)`. */
  custom: unknown;
  tasks: TasksChunk;
  /** Each durable write of the run, as `getState()` shows it (without `createdAt`). */
  checkpoints: CheckpointChunk<S>;
  debug: DebugChunk<S>;
}

/** What `stream(input, { streamMode: M })` yields. */
export type StreamOutput<S extends BaseState, M extends StreamModeOption> = M extends StreamMode
  ? StreamChunks<S>[M]
  : M extends readonly (infer K extends StreamMode)[]
    ? { [Mode in K]: [Mode, StreamChunks<S>[Mode]] }[K]
    : never;

/** The config of `stream()`: a {@link RunConfig} and the stream mode (default `"events"`). */
export interface StreamConfig<M extends StreamModeOption = "events"> extends RunConfig {
  streamMode?: M;
}

/**
 * The modes `streamMode` asks for, and whether it named several (then chunks are tuples).
 * An unknown mode, an empty list or a value of another type is refused with `INPUT_001`.
 */
export function resolveStreamMode(value: unknown): { modes: StreamMode[]; tuples: boolean } {
  if (value === undefined) return { modes: ["events"], tuples: false };
  const tuples = Array.isArray(value);
  const modes: unknown[] = tuples ? value : [value];
  if (modes.length === 0) {
    throw new InvalidRunError("INPUT_001", "config.streamMode must name at least one mode");
  }
  for (const mode of modes) {
    if (!STREAM_MODES.includes(mode as StreamMode)) {
      throw new InvalidRunError(
        "INPUT_001",
        `config.streamMode: unknown mode ${JSON.stringify(mode) ?? String(mode)}; ` +
          `use one of ${STREAM_MODES.join(", ")}`,
      );
    }
  }
  return { modes: [...new Set(modes as StreamMode[])], tuples };
}
