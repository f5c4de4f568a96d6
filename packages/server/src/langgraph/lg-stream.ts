import type {
  BaseState,
  Message,
  MessagesChunk,
  RunInput,
  StreamEvent,
  StreamOutput,
} from "@tenxgraph/core";
import { toLcMessage } from "@tenxgraph/core/interop";
import type { ChunkMode } from "../background/run-record.js";
import { LgEventsMapper } from "./lg-events.js";
import { aiChunk, lgInterrupt, lgUpdate, lgValues } from "./lg-values.js";
import { lgCheckpointEvent } from "./lg-state.js";

/**
 * The stream modes a run may ask for, and the engine's modes each is made from (besides the
 * run loop's events, which every run streams). `events` (LangChain's callback events) needs
 * each node's task start and result, and the state for the graph's output.
 */
export const LG_STREAM_MODES = {
  values: ["values"],
  updates: ["updates"],
  messages: ["messages"],
  "messages-tuple": ["messages"],
  custom: ["custom"],
  tasks: ["tasks"],
  checkpoints: ["checkpoints"],
  debug: ["debug"],
  events: ["tasks", "values"],
} as const satisfies Record<string, readonly ChunkMode[]>;
export type LgStreamMode = keyof typeof LG_STREAM_MODES;

/** One SSE event of LangGraph's run stream: its name and its JSON data. */
export interface LgEvent {
  event: string;
  data: unknown;
}

/** The engine's modes a run streams with: its events (always) and what the modes asked need. */
export function engineModes(modes: readonly LgStreamMode[]): ("events" | ChunkMode)[] {
  return [...new Set(["events" as const, ...modes.flatMap((mode) => LG_STREAM_MODES[mode])])];
}

/** What a run's stream is mapped for: its modes, thread, run id and input. */
export interface LgStreamOf {
  modes: readonly LgStreamMode[];
  threadId: string;
  /** The run id the client knows (a queued run's, else the engine's). */
  runId: string;
  input: RunInput<BaseState> | null;
}

/**
 * Turns the engine's `[mode, chunk]` tuples into LangGraph's SSE events, for the modes asked:
 * `values`, `updates` (with `__interrupt__`), `messages` tuples of a LangChain message chunk
 * and its metadata (`messages-tuple`), the `messages/partial|complete|metadata` trio
 * (`messages`), `custom`, `tasks` (each task's start and result, as LangGraph.js's) and
 * `checkpoints` (each durable write, as a `ThreadState`), and `events` ({@link LgEventsMapper}).
 * A tool result's ledger key and replay rides in the metadata. Foreground and queued runs are
 * mapped by this one class, from the same engine chunks (live, or as the queue stored them).
 */
export class LgStreamMapper {
  readonly #modes: ReadonlySet<LgStreamMode>;
  /** Text so far of each message streamed token by token, by id. */
  readonly #streamed = new Map<string, string>();
  /** The ledger's word on each tool call id whose result arrived: key and replay. */
  readonly #tools = new Map<string, { ledger_key: string | null; replayed: boolean }>();

  readonly #threadId: string;
  /** LangChain's callback events, when the `events` mode was asked. */
  readonly #events: LgEventsMapper | null;

  constructor(run: LgStreamOf) {
    this.#modes = new Set(run.modes);
    this.#threadId = run.threadId;
    this.#events = this.#modes.has("events") ? new LgEventsMapper(run) : null;
  }

  /** The events for one engine chunk. */
  map(chunk: [string, unknown]): LgEvent[] {
    const events = this.#events?.map(chunk).map((data) => ({ event: "events", data })) ?? [];
    return [...events, ...this.#ofModes(chunk)];
  }

  #ofModes(chunk: [string, unknown]): LgEvent[] {
    const [mode, data] = chunk;
    if (mode === "events") return this.#fromEvent(data as StreamEvent);
    if (mode === "values" && this.#modes.has("values"))
      return [{ event: "values", data: lgValues(data as Record<string, unknown>) }];
    if (mode === "updates" && this.#modes.has("updates")) {
      const updates = Object.entries(data as Record<string, unknown>);
      return [
        { event: "updates", data: Object.fromEntries(updates.map(([n, u]) => [n, lgUpdate(u)])) },
      ];
    }
    if (mode === "custom" && this.#modes.has("custom")) return [{ event: "custom", data }];
    if (mode === "tasks" && this.#modes.has("tasks"))
      return [{ event: "tasks", data: lgTask(data as TasksChunk) }];
    if (mode === "checkpoints" && this.#modes.has("checkpoints")) {
      const chunk = data as Parameters<typeof lgCheckpointEvent>[1];
      return [{ event: "checkpoints", data: lgCheckpointEvent(this.#threadId, chunk) }];
    }
    if (mode === "debug" && this.#modes.has("debug")) return this.#fromDebug(data as DebugChunk);
    if (mode === "messages") return this.#fromMessages(data as MessagesChunk);
    return [];
  }

  /**
   * LangGraph's `debug` events: each checkpoint, task start and task result of the run, with
   * its step and time; the run loop's other events have no debug event there.
   */
  #fromDebug({ step, timestamp, event }: DebugChunk): LgEvent[] {
    const debug = (type: string, payload: unknown) => [
      { event: "debug", data: { type, timestamp, step, payload } },
    ];
    if (event.type === "checkpoint")
      return debug("checkpoint", lgCheckpointEvent(this.#threadId, event.checkpoint));
    if (event.type === "task_start") {
      const { id, name, input, triggers } = event;
      return debug("task", lgTask({ id, name, input, triggers }));
    }
    if (event.type === "task_result") {
      const { id, name, result, interrupts, error } = event;
      return debug("task_result", lgTask({ id, name, result, interrupts, error }));
    }
    return [];
  }

  #fromEvent(event: StreamEvent): LgEvent[] {
    if (event.type === "tool_result")
      this.#tools.set(event.toolCallId, { ledger_key: event.key, replayed: event.replayed });
    if (event.type === "error")
      return [{ event: "error", data: { error: event.code ?? "Error", message: event.message } }];
    if (event.type !== "interrupt") return [];
    const pending = { __interrupt__: event.interrupts.map(lgInterrupt) };
    const out: LgEvent[] = [];
    if (this.#modes.has("updates")) out.push({ event: "updates", data: pending });
    if (this.#modes.has("values")) out.push({ event: "values", data: pending });
    return out;
  }

  #fromMessages([part, where]: MessagesChunk): LgEvent[] {
    const metadata = {
      langgraph_node: where.node,
      langgraph_step: where.step,
      langgraph_checkpoint_ns: "",
      tags: [],
    };
    const tuple = this.#modes.has("messages-tuple");
    const trio = this.#modes.has("messages");
    if (part.type === "message_delta") {
      const first = !this.#streamed.has(part.messageId);
      const text = (this.#streamed.get(part.messageId) ?? "") + part.delta;
      this.#streamed.set(part.messageId, text);
      const out: LgEvent[] = [];
      if (tuple)
        out.push({ event: "messages", data: [aiChunk(part.messageId, part.delta), metadata] });
      if (trio && first)
        out.push({ event: "messages/metadata", data: { [part.messageId]: { metadata } } });
      if (trio)
        out.push({ event: "messages/partial", data: [aiChunk(part.messageId, text, "ai")] });
      return out;
    }
    const message = part.message;
    const lc = this.#withLedger(message);
    const out: LgEvent[] = [];
    if (tuple) {
      const streamed = this.#streamed.has(message.id);
      // A message streamed token by token was sent; its tool calls come as one last chunk.
      if (!streamed) out.push({ event: "messages", data: [lc, metadata] });
      else if (message.role === "assistant" && message.toolCalls?.length)
        out.push({ event: "messages", data: [toolCallChunk(message), metadata] });
    }
    if (trio) {
      if (!this.#streamed.has(message.id))
        out.push({ event: "messages/metadata", data: { [message.id]: { metadata } } });
      out.push({ event: "messages/complete", data: [lc] });
    }
    return out;
  }

  #withLedger(message: Message) {
    const lc = toLcMessage(message);
    const tool = message.role === "tool" ? this.#tools.get(message.toolCallId) : undefined;
    if (tool) lc.response_metadata = { ...lc.response_metadata, tenxgraph: tool };
    return lc;
  }
}

type TasksChunk = StreamOutput<BaseState, "tasks">;
type DebugChunk = StreamOutput<BaseState, "debug">;

/** A `tasks` chunk with LangChain's messages: the task's input state, or its writes. */
function lgTask(chunk: TasksChunk) {
  if ("input" in chunk) {
    const input = chunk.input;
    const isState = typeof input === "object" && input !== null && !Array.isArray(input);
    return {
      ...chunk,
      interrupts: [],
      input: isState ? lgValues(input as Record<string, unknown>) : input,
    };
  }
  const writes = lgUpdate(Object.fromEntries(chunk.result)) as Record<string, unknown>;
  return {
    ...chunk,
    result: Object.entries(writes),
    interrupts: chunk.interrupts.map(lgInterrupt),
  };
}

/** The tool calls of a message streamed token by token, as the chunk that completes it. */
function toolCallChunk(message: Message) {
  const lc = toLcMessage(message);
  return {
    ...aiChunk(message.id, ""),
    tool_calls: lc.tool_calls ?? [],
    tool_call_chunks: (message.toolCalls ?? []).map((call, index) => ({
      id: call.id,
      name: call.name,
      args: call.arguments,
      index,
      type: "tool_call_chunk",
    })),
  };
}
