/**
 * Helpers shared by the core's own tests (not exported from `@tenxgraph/core/testing`): a
 * capturing logger, a meter whose counters can be read back, a support-agent graph, and a fault
 * point that freezes a run the way a killed process leaves it.
 * @module
 */
import type { Meter } from "@opentelemetry/api";
import { MeterProvider, MetricReader, type DataPoint } from "@opentelemetry/sdk-metrics";
import type { Logger } from "../events/logger.js";
import { METER_NAME } from "../events/metrics.js";
import type { CompiledGraph, CompileOptions } from "../graph/compiled-graph.js";
import { END } from "../graph/edges.js";
import type { NodeLike } from "../graph/graph-node.js";
import type { BaseState } from "../graph/reducers.js";
import { StateGraph, type StateOptions } from "../graph/state-graph.js";
import { Message, type AssistantMessage, type ToolMessage } from "../messages/message.js";
import type { FaultContext, FaultPointName } from "../runtime/fault-points.js";
import type { StreamEvent } from "../events/stream-event.js";
import { ToolNode } from "../tools/tool-node.js";
import type { AnyTool } from "../tools/tool.js";
import { FaultPoints } from "./fault-points.js";
import { ScriptedModel, type ScriptedTurn } from "./scripted-model.js";

/** One record written to a {@link captureLogger}. */
export interface LogRecord {
  level: "debug" | "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A logger that keeps every record, for assertions on exact log lines. */
export function captureLogger(): Logger & {
  records: LogRecord[];
  find(level: LogRecord["level"], fragment: string): LogRecord[];
} {
  const records: LogRecord[] = [];
  const write = (level: LogRecord["level"]) => (fields: object, message?: string) => {
    records.push({ level, fields: { ...fields } as Record<string, unknown>, message });
  };
  return {
    records,
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    find: (level, fragment) =>
      records.filter((r) => r.level === level && (r.message ?? "").includes(fragment)),
  };
}

/** A reader that only exports when asked: `collect()` on demand. */
class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A real OpenTelemetry SDK meter; `sum(name)` reads a counter's total (over all attributes). */
export function testMeter(): {
  meter: Meter;
  sum(name: string, attributes?: Record<string, unknown>): Promise<number>;
} {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    meter: provider.getMeter(METER_NAME),
    async sum(name, attributes = {}) {
      const { resourceMetrics } = await reader.collect();
      let total = 0;
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== name) continue;
          for (const point of metric.dataPoints as DataPoint<number>[]) {
            const matches = Object.entries(attributes).every(
              ([key, value]) => point.attributes[key] === value,
            );
            if (matches) total += point.value;
          }
        }
      }
      return total;
    },
  };
}

/** Options of {@link supportAgent}. */
export interface SupportAgentOptions<S extends BaseState> extends CompileOptions {
  /** The model: scripted replies, or any node. */
  model: readonly ScriptedTurn<S>[] | NodeLike<S>;
  tools: readonly AnyTool[];
  state?: StateOptions<S>;
}

/**
 * MAIN (the model) → TOOL while the last message has tool calls → MAIN … → END. Build it twice
 * on one checkpointer to get "another process" on the same threads.
 */
export function supportAgent<S extends BaseState = BaseState & Record<string, unknown>>(
  options: SupportAgentOptions<S>,
): CompiledGraph<S> {
  const { model, tools, state, ...compile } = options;
  const node: NodeLike<S> = Array.isArray(model)
    ? new ScriptedModel<S>(model as readonly ScriptedTurn<S>[])
    : (model as NodeLike<S>);
  return new StateGraph<S>(state)
    .addNode("MAIN", node)
    .addNode("TOOL", new ToolNode<S>([...tools]))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls?.length ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ logger: captureLogger(), ...compile });
}

/**
 * A scripted reply with a fixed message id, so a test knows the calls' ledger keys
 * (`<id>:<callId>`) before the run. Calls are `[name, args, callId?]`; ids default to `call_<n>`.
 */
export function callsTurn(
  messageId: string,
  calls: readonly (readonly [name: string, args: unknown, callId?: string])[],
): () => AssistantMessage {
  return () => ({
    ...Message.assistant(
      "",
      calls.map(([name, args, id], i) => ({
        id: id ?? `call_${i + 1}`,
        name,
        arguments: typeof args === "string" ? args : JSON.stringify(args),
      })),
    ),
    id: messageId,
  });
}

/** The tool messages of a transcript, in order. */
export function toolMessages(state: BaseState): ToolMessage[] {
  return state.messages.filter((m): m is ToolMessage => m.role === "tool");
}

/** The text of the tool message answering `toolCallId` (throws when there is none). */
export function toolText(state: BaseState, toolCallId: string): string {
  const found = toolMessages(state).filter((m) => m.toolCallId === toolCallId);
  if (found.length === 0) throw new Error(`no tool message answers '${toolCallId}'`);
  return Message.text(found.at(-1)!);
}

/** A promise with its resolve and reject exposed. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Freezes a run at a fault point, the way a killed process leaves its store: nothing after the
 * point happens until `release(error)` lets the zombie go on (and fail) at the end of a test.
 */
export function freezeAt(
  point: FaultPointName,
  when: (context: FaultContext) => boolean = () => true,
): {
  faultPoints: FaultPoints;
  reached: Promise<FaultContext>;
  release(error?: Error): void;
} {
  const reached = deferred<FaultContext>();
  const frozen = deferred<never>();
  // The zombie's rejection is observed by the run that reaches it; this only silences the gate.
  frozen.promise.catch(() => {});
  const faultPoints = new FaultPoints().arm(
    point,
    async (context) => {
      reached.resolve(context);
      await frozen.promise;
    },
    { when, times: 1 },
  );
  return {
    faultPoints,
    reached: reached.promise,
    release: (error = new Error("the frozen process died")) => frozen.reject(error),
  };
}

/** Collects a stream's events. */
export async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

/** The events of one type, narrowed. */
export function ofType<T extends StreamEvent["type"]>(
  events: readonly StreamEvent[],
  type: T,
): Extract<StreamEvent, { type: T }>[] {
  return events.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);
}

/** Resolves after `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
