/**
 * Helpers shared by the core's own tests (not exported from `@tenxgraph/core/testing`): a logger
 * that keeps its records, a meter that can be read back, a checkpointer that records its
 * versioned writes, a support-agent graph, a fault point that freezes a run the way a killed
 * process leaves it, stream collection, and promises a test controls.
 * @module
 */
import type { Meter } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { METER_NAME } from "../events/metrics.js";
import type { StreamEvent } from "../events/stream-event.js";
import type { BaseState } from "../definition/reducers.js";
import type { LedgerEntry } from "../storage/ledger-entry.js";
import { Message, type AssistantMessage, type ToolMessage } from "../messages/message.js";
import type { FaultContext, FaultPointName } from "../node/fault-points.js";
import type { AttemptRef } from "../storage/ledger-entry.js";
import type {
  Checkpointer,
  CheckpointWrite,
  StepCommit,
  StepLedgerWrites,
  StepWrite,
} from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";

import { recordingLogger } from "../testing/recording-logger.js";

export { recordingLogger };
export type { LogRecord, RecordingLogger } from "../testing/recording-logger.js";
export { supportAgent } from "../testing/support-agent.js";
export type { SupportAgentOptions } from "../testing/support-agent.js";

/** A reader that only exports when asked: `collect()` on demand. */
class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A data point of a metric, as read back from a {@link TestMeter}. */
export interface MetricPoint {
  attributes: Record<string, unknown>;
  value: unknown;
}

/** An OpenTelemetry SDK meter named `10xgraph` whose metrics a test can read back. */
export interface TestMeter {
  meter: Meter;
  /** Names of the metrics with at least one data point under the `10xgraph` scope. */
  names(): Promise<string[]>;
  points(name: string): Promise<MetricPoint[]>;
  /** A counter's total over the points whose attributes include `attributes`; 0 when none. */
  sum(name: string, attributes?: Record<string, unknown>): Promise<number>;
}

export function testMeter(): TestMeter {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  const read = async () => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics
      .filter((scope) => scope.scope.name === METER_NAME)
      .flatMap((scope) => scope.metrics);
  };
  const points = async (name: string): Promise<MetricPoint[]> =>
    (await read())
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) => metric.dataPoints as MetricPoint[]);
  return {
    meter: provider.getMeter(METER_NAME),
    names: async () => (await read()).map((metric) => metric.descriptor.name),
    points,
    sum: async (name, attributes = {}) =>
      (await points(name))
        .filter((point) =>
          Object.entries(attributes).every(([key, value]) => point.attributes[key] === value),
        )
        .reduce((total, point) => total + (point.value as number), 0),
  };
}

/** A committed write as {@link RecordingCheckpointer} saw it, with the version it produced. */
export interface RecordedWrite extends CheckpointWrite {
  committedVersion: number;
}

/**
 * The real in-memory store, recording every committed checkpoint write, by `putCheckpoint` or
 * `commitStep` (copied, so later changes by the caller do not show; without the ledger writes a
 * step write carries, which `ledgerWrites` keeps). Refused writes are not recorded.
 */
export class RecordingCheckpointer extends InMemoryCheckpointer {
  readonly writes: RecordedWrite[] = [];
  /** The ledger writes of each committed `commitStep`, in order. */
  readonly ledgerWrites: StepLedgerWrites[] = [];

  override async putCheckpoint(write: CheckpointWrite): Promise<number> {
    const copy = structuredClone(write);
    const committedVersion = await super.putCheckpoint(write);
    this.writes.push({ ...copy, committedVersion });
    return committedVersion;
  }

  override async commitStep(write: StepWrite): Promise<StepCommit> {
    const { ledger, ...copy } = structuredClone(write);
    const committed = await super.commitStep(write);
    this.writes.push({ ...copy, committedVersion: committed.version });
    this.ledgerWrites.push(ledger);
    return committed;
  }
}

/**
 * The real in-memory store, telling a test how often the ledger was read: `readsFromNow(n)`
 * resolves once `getCalls` returned `n` more times. An execution waiting on another's claim
 * polls the ledger, so a test can let it wait a number of polls instead of a time.
 */
export class LedgerReadsCheckpointer extends InMemoryCheckpointer {
  #reads = 0;
  #waiters: { at: number; resolve: () => void }[] = [];

  readsFromNow(n: number): Promise<void> {
    const waiter = deferred();
    this.#waiters.push({ at: this.#reads + n, resolve: waiter.resolve });
    return waiter.promise;
  }

  override async getCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    const entries = await super.getCalls(threadId, keys);
    this.#reads += 1;
    for (const waiter of this.#waiters) if (this.#reads >= waiter.at) waiter.resolve();
    return entries;
  }
}

/**
 * `checkpointer` as a frozen or killed process leaves it: every call goes through, except that
 * heartbeats renew nothing (and report nothing lost), so the claims made through it expire one
 * lease after they were made. Give it to the runtime that plays the process that dies while its
 * run is held at a fault point (its heartbeat timer would otherwise keep its claims live).
 */
export function withoutHeartbeats(checkpointer: Checkpointer): Checkpointer {
  return new Proxy(checkpointer, {
    get(target, property) {
      if (property === "heartbeatCalls") return async (): Promise<AttemptRef[]> => [];
      const value: unknown = Reflect.get(target, property, target);
      // Bound to the store itself: its #private fields are not reachable through the proxy.
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
}

/**
 * `checkpointer` without `commitStep`, as a store written for ledger protocol v1 is: every
 * result is recorded as its tool returns and every call is claimed by its node. Tests of the
 * v1 windows (a crash between a record and the step write) run on it.
 */
export function withoutStepWrites<C extends Checkpointer>(checkpointer: C): C {
  return new Proxy(checkpointer, {
    get(target, property) {
      if (property === "commitStep") return undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
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

/** A transcript without ids and timestamps, to compare runs whose messages were made apart. */
export function transcriptShape(messages: readonly Message[]): Record<string, unknown>[] {
  return messages.map(({ id: _id, createdAt: _createdAt, ...rest }) => rest);
}

/** Every event of a stream, and the error the iterator threw after them (if any). */
export async function collectEvents(
  stream: AsyncIterable<StreamEvent>,
): Promise<{ events: StreamEvent[]; error: unknown }> {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

/** The events of one type, narrowed. */
export function ofType<T extends StreamEvent["type"]>(
  events: readonly StreamEvent[],
  type: T,
): Extract<StreamEvent, { type: T }>[] {
  return events.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);
}

/** A promise with its settle functions, for nodes and tools a test releases by hand. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** How a promise settled, without letting a rejection go unhandled. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** A promise that never settles: a node or tool that hangs and ignores its signal. */
export function forever(): Promise<never> {
  return new Promise<never>(() => {});
}

/** Rejects with the signal's reason once it aborts: a node or tool that hangs but honours it. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** Lets pending timers and I/O callbacks of this turn run. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves after `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
