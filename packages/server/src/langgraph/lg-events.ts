import { createHash } from "node:crypto";
import {
  Command,
  type BaseState,
  type Message,
  type RunInput,
  type StreamEvent,
  type StreamOutput,
} from "@tenxgraph/core";
import { toLcMessage } from "@tenxgraph/core/interop";
import { aiChunk, isMessage, lgUpdate, lgValues } from "./lg-values.js";

/** The `data` of LangGraph's `events` SSE event: a LangChain `astream_events` v2 event. */
export interface LcRunEvent {
  event: string;
  name: string;
  run_id: string;
  tags: string[];
  metadata: Record<string, unknown>;
  data: Record<string, unknown>;
  parent_ids: string[];
}

/** The name LangGraph gives a compiled graph's own run. */
const GRAPH_RUN_NAME = "LangGraph";
/** Our model calls are made inside a node: the model's class is not known here. */
const MODEL_RUN_NAME = "chat_model";

type TasksChunk = StreamOutput<BaseState, "tasks">;

/** A node at work: its run id, its step, and the replies its model streamed, by message id. */
interface OpenNode {
  runId: string;
  step: number;
  metadata: Record<string, unknown>;
  streamed: Map<string, string>;
}

/** What the ledger said of a call found in doubt, for its `on_tool_end`. */
interface InDoubt {
  attempt: number;
  policy: string;
}

/**
 * LangGraph's `events` stream mode, made from the run loop's events (`run_start`, each node's
 * task start and result, token deltas, tool calls, `run_end`) and the `values` chunks: the
 * graph's and each node's `on_chain_start`/`on_chain_stream`/`on_chain_end`, a streamed
 * reply's `on_chat_model_start`/`on_chat_model_stream`/`on_chat_model_end`, and each tool
 * call's `on_tool_start`/`on_tool_end` with the ledger's word (key, replay, in doubt) in
 * `metadata.tenxgraph`. Run ids are derived from the run's id, so mapping the same stored
 * events again (a rejoined queued run) gives the same ids.
 */
export class LgEventsMapper {
  readonly #runId: string;
  readonly #input: unknown;
  readonly #base: Record<string, unknown>;
  /** The nodes at work, by task id (a `Send` fans one node out into several tasks). */
  readonly #tasks = new Map<string, OpenNode>();
  /**
   * The last task of each node name: token and tool events name their node, not their task, so
   * those of a node fanned out are parented to its last task.
   */
  readonly #nodes = new Map<string, OpenNode>();
  readonly #steps = new Map<string, number>();
  /** Each tool call's arguments, from the assistant messages seen. */
  readonly #toolInputs = new Map<string, unknown>();
  readonly #inDoubt = new Map<string, InDoubt>();
  #output: unknown = null;

  constructor(options: { runId: string; threadId: string; input: RunInput<BaseState> | null }) {
    this.#runId = options.runId;
    this.#input = lgRunInput(options.input);
    this.#base = { thread_id: options.threadId, run_id: options.runId };
  }

  /** The `events` events for one engine chunk (the run loop's events, `tasks`, `values`). */
  map([mode, data]: [string, unknown]): LcRunEvent[] {
    if (mode === "values") {
      this.#output = lgValues(data as Record<string, unknown>);
      return [];
    }
    if (mode === "tasks") {
      const task = data as TasksChunk;
      return "input" in task ? this.#nodeStart(task) : this.#nodeEnd(task);
    }
    if (mode !== "events") return [];
    const event = data as StreamEvent;
    if ("namespace" in event && event.namespace) return []; // a subgraph's: its own run
    switch (event.type) {
      case "run_start":
        return [this.#graph("on_chain_start", { input: this.#input })];
      case "run_end":
        return [this.#graph("on_chain_end", { output: this.#output })];
      case "node_start":
        this.#steps.set(event.node, event.step);
        return [];
      case "message":
        this.#noteCalls([event.message]);
        return [];
      case "message_delta":
        return this.#modelToken(event.node, event.messageId, event.delta);
      case "tool_start":
        return [
          this.#tool("on_tool_start", event.node, event.toolCallId, event.toolName, {
            ledger_key: event.key,
          }),
        ];
      case "tool_in_doubt":
        this.#inDoubt.set(event.toolCallId, { attempt: event.attempt, policy: event.policy });
        return [];
      case "tool_result":
        return [this.#toolEnd(event)];
      default:
        return [];
    }
  }

  #graph(event: string, data: Record<string, unknown>): LcRunEvent {
    return {
      event,
      name: GRAPH_RUN_NAME,
      run_id: this.#runId,
      tags: [],
      metadata: this.#base,
      data,
      parent_ids: [],
    };
  }

  #nodeStart(task: Extract<TasksChunk, { input: unknown }>): LcRunEvent[] {
    const step = this.#steps.get(task.name) ?? 0;
    const input = task.input;
    const isState = typeof input === "object" && input !== null && !Array.isArray(input);
    if (isState) this.#noteCalls((input as { messages?: unknown }).messages);
    const metadata = {
      ...this.#base,
      langgraph_step: step,
      langgraph_node: task.name,
      langgraph_triggers: task.triggers,
      langgraph_path: ["__pregel_pull", task.name],
      langgraph_checkpoint_ns: "",
    };
    const node = { runId: this.#derivedId("node", task.id), step, metadata, streamed: new Map() };
    this.#tasks.set(task.id, node);
    this.#nodes.set(task.name, node);
    const data = { input: isState ? lgValues(input as Record<string, unknown>) : input };
    return [this.#ofNode(node, "on_chain_start", task.name, [`graph:step:${step}`], data)];
  }

  /**
   * A node's task settled: its streamed replies end (with the messages it wrote), then, unless
   * it paused or failed, its writes are its `on_chain_stream` and `on_chain_end` and a chunk of
   * the graph's stream.
   */
  #nodeEnd(task: Exclude<TasksChunk, { input: unknown }>): LcRunEvent[] {
    const node = this.#tasks.get(task.id);
    if (!node) return [];
    this.#tasks.delete(task.id);
    if (this.#nodes.get(task.name) === node) this.#nodes.delete(task.name);
    const written = task.result.flatMap(([field, value]) =>
      field === "messages" ? [value].flat().filter(isMessage) : [],
    );
    this.#noteCalls(written);
    const out = [...node.streamed].map(([id, text]) => {
      const message = written.find((m) => m.id === id);
      const output = message ? toLcMessage(message) : aiChunk(id, text, "ai");
      return this.#ofNode(node, "on_chat_model_end", MODEL_RUN_NAME, [], { output }, id);
    });
    if (task.error !== null || task.interrupts.length > 0) return out;
    const update = lgUpdate(Object.fromEntries(task.result));
    const nodeTags = [`graph:step:${node.step}`];
    out.push(this.#ofNode(node, "on_chain_stream", task.name, nodeTags, { chunk: update }));
    out.push(this.#ofNode(node, "on_chain_end", task.name, nodeTags, { output: update }));
    out.push(this.#graph("on_chain_stream", { chunk: { [task.name]: update } }));
    return out;
  }

  #modelToken(nodeName: string, messageId: string, delta: string): LcRunEvent[] {
    const node = this.#nodes.get(nodeName);
    if (!node) return [];
    const out: LcRunEvent[] = [];
    const text = node.streamed.get(messageId);
    if (text === undefined)
      out.push(this.#ofNode(node, "on_chat_model_start", MODEL_RUN_NAME, [], {}, messageId));
    node.streamed.set(messageId, (text ?? "") + delta);
    const data = { chunk: aiChunk(messageId, delta) };
    out.push(this.#ofNode(node, "on_chat_model_stream", MODEL_RUN_NAME, [], data, messageId));
    return out;
  }

  #toolEnd(event: Extract<StreamEvent, { type: "tool_result" }>): LcRunEvent {
    const ledger = {
      ledger_key: event.key,
      replayed: event.replayed,
      in_doubt: this.#inDoubt.get(event.toolCallId) ?? null,
    };
    const output = toLcMessage(event.message);
    return this.#tool("on_tool_end", event.node, event.toolCallId, event.toolName, ledger, {
      output,
    });
  }

  #tool(
    event: string,
    nodeName: string,
    toolCallId: string,
    toolName: string,
    ledger: Record<string, unknown>,
    more: Record<string, unknown> = {},
  ): LcRunEvent {
    const node = this.#nodes.get(nodeName);
    const parent = node ? [this.#runId, node.runId] : [this.#runId];
    return {
      event,
      name: toolName,
      run_id: this.#derivedId("tool", toolCallId),
      tags: [],
      metadata: {
        ...(node?.metadata ?? this.#base),
        tool_call_id: toolCallId,
        tenxgraph: ledger,
      },
      data: { input: this.#toolInputs.get(toolCallId) ?? null, ...more },
      parent_ids: parent,
    };
  }

  /** An event of a node or of a model call inside it (`modelKey`: the reply's message id). */
  #ofNode(
    node: OpenNode,
    event: string,
    name: string,
    tags: string[],
    data: Record<string, unknown>,
    modelKey?: string,
  ): LcRunEvent {
    const inside = modelKey !== undefined;
    return {
      event,
      name,
      run_id: inside ? this.#derivedId("model", modelKey) : node.runId,
      tags,
      metadata: node.metadata,
      data,
      parent_ids: inside ? [this.#runId, node.runId] : [this.#runId],
    };
  }

  /** Keeps the arguments of the tool calls of `messages`, for their tool events' `input`. */
  #noteCalls(messages: unknown): void {
    if (!Array.isArray(messages)) return;
    for (const message of messages as Message[])
      for (const call of (isMessage(message) && message.toolCalls) || [])
        this.#toolInputs.set(call.id, parsedArguments(call.arguments));
  }

  /** A UUID-shaped id for a part of this run, the same each time the run's events are mapped. */
  #derivedId(kind: string, key: string): string {
    const hex = createHash("sha256").update(`${this.#runId}\n${kind}\n${key}`).digest("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

/** A tool call's arguments as an object when they are JSON (a model may send bad JSON). */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The run's input as LangGraph shows it: LangChain's messages; a command's fields. */
function lgRunInput(input: RunInput<BaseState> | null): unknown {
  if (input === null || typeof input !== "object") return input ?? null;
  if (!(input instanceof Command) && !Object.hasOwn(input, "resume")) return lgUpdate(input);
  const { update, ...rest } = input as { update?: unknown };
  return { ...rest, ...(update === undefined ? {} : { update: lgUpdate(update) }) };
}
