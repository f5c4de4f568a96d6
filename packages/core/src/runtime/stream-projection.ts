import { deepCopy } from "../definition/state-copy.js";
import type { RunEvent } from "./run-event.js";
import type { StreamEvent } from "../events/stream-event.js";
import type { StreamMode } from "./stream-mode.js";

/** Events that only the other modes (`values`, `updates`, `custom`, `tasks`, `checkpoints`, `debug`) show. */
const NOT_DEFAULT: ReadonlySet<RunEvent["type"]> = new Set([
  "update",
  "values",
  "custom",
  "task_start",
  "task_result",
  "checkpoint",
]);

/**
 * Turns each event of the run loop into the chunks of the stream modes asked for. It runs as
 * the loop sends each event, so the state and updates it yields are copies taken then: a
 * consumer that changes a chunk cannot change the run.
 */
export class StreamProjection {
  readonly #modes: readonly StreamMode[];
  readonly #tuples: boolean;

  constructor(modes: readonly StreamMode[], tuples: boolean) {
    this.#modes = modes;
    this.#tuples = tuples;
  }

  /** The chunks `event` gives, in the order of the modes asked for. */
  project(event: RunEvent, step: number | null): unknown[] {
    const chunks: unknown[] = [];
    for (const mode of this.#modes) {
      const chunk = chunkOf(mode, event, step);
      if (chunk !== undefined) chunks.push(this.#tuples ? [mode, chunk.value] : chunk.value);
    }
    return chunks;
  }
}

/** The chunk of one mode for `event`, or `undefined` when the mode does not show it. */
function chunkOf(
  mode: StreamMode,
  event: RunEvent,
  step: number | null,
): { value: unknown } | undefined {
  switch (mode) {
    case "events":
      return NOT_DEFAULT.has(event.type) ? undefined : { value: event as StreamEvent };
    case "values":
      return event.type === "values" ? { value: copyState(event.state) } : undefined;
    case "updates":
      return event.type === "update"
        ? { value: { [event.node]: copyState(event.update) } }
        : undefined;
    case "messages":
      return messagesChunk(event, step ?? 0);
    case "custom":
      return event.type === "custom" ? { value: event.data } : undefined;
    case "tasks":
      return tasksChunk(event);
    case "checkpoints":
      return event.type === "checkpoint"
        ? { value: { ...event.checkpoint, values: copyState(event.checkpoint.values) } }
        : undefined;
    case "debug":
      return { value: { step, timestamp: new Date().toISOString(), event: copyEvent(event) } };
  }
}

function messagesChunk(event: RunEvent, step: number): { value: unknown } | undefined {
  if (event.type === "message_delta") {
    const { messageId, delta } = event;
    return {
      value: [
        { type: "message_delta", messageId, delta },
        { node: event.node, step },
      ],
    };
  }
  if (event.type === "message") {
    return {
      value: [
        { type: "message", message: event.message },
        { node: event.node, step },
      ],
    };
  }
  return undefined;
}

function tasksChunk(event: RunEvent): { value: unknown } | undefined {
  if (event.type === "task_start") {
    const { id, name, input, triggers } = event;
    const copy = typeof input === "object" && input !== null ? copyState(input) : input;
    return { value: { id, name, input: copy, triggers } };
  }
  if (event.type === "task_result") {
    const { id, name, result, interrupts, error } = event;
    const writes = result.map(([field, value]) => [field, copyState({ [field]: value })[field]]);
    return { value: { id, name, result: writes, interrupts, error } };
  }
  return undefined;
}

function copyEvent(event: RunEvent): RunEvent {
  if (event.type === "values") return { ...event, state: copyState(event.state) };
  if (event.type === "update") return { ...event, update: copyState(event.update) };
  if (event.type === "task_start" || event.type === "task_result") {
    return { ...event, ...(tasksChunk(event)!.value as object) } as RunEvent;
  }
  if (event.type === "checkpoint") {
    const { checkpoint } = event;
    return { ...event, checkpoint: { ...checkpoint, values: copyState(checkpoint.values) } };
  }
  return event;
}

/** Fields deep-copied, the transcript shallow (messages are immutable), as a node's copy is. */
function copyState<T extends { messages?: readonly unknown[] }>(state: T): T {
  const { messages, ...values } = state;
  const copy = deepCopy(values) as T;
  if (messages !== undefined) copy.messages = messages.slice();
  return copy;
}
