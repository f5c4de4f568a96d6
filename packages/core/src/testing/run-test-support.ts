/**
 * Helpers for the runtime's own tests (graph, run loop, deadlines, stop, stream, metrics): a
 * logger that keeps its records, a checkpointer that records its versioned writes, a meter
 * that can be read back, and promises a test controls. Not part of `@tenxgraph/core/testing`.
 * @module
 */
import type { Meter } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import type { Logger } from "../events/logger.js";
import { METER_NAME } from "../events/metrics.js";
import type { StreamEvent } from "../events/stream-event.js";
import type { Message } from "../messages/message.js";
import type { CheckpointWrite } from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";

/** One record a {@link recordingLogger} received. */
export interface LogRecord {
  level: "debug" | "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A pino-shaped logger that keeps every record, for assertions on structured fields. */
export interface RecordingLogger extends Logger {
  readonly records: LogRecord[];
  /** Records at `level` whose message contains `text`. */
  find(level: LogRecord["level"], text: string): LogRecord[];
}

export function recordingLogger(): RecordingLogger {
  const records: LogRecord[] = [];
  const write =
    (level: LogRecord["level"]) =>
    (fields: object, message?: string): void => {
      records.push({ level, fields: { ...fields } as Record<string, unknown>, message });
    };
  return {
    records,
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    find: (level, text) =>
      records.filter((r) => r.level === level && (r.message ?? "").includes(text)),
  };
}

/** A committed write as {@link RecordingCheckpointer} saw it, with the version it produced. */
export interface RecordedWrite extends CheckpointWrite {
  committedVersion: number;
}

/**
 * The real in-memory store, recording every committed `putCheckpoint` (copied, so later
 * changes by the caller do not show). Refused writes are not recorded.
 */
export class RecordingCheckpointer extends InMemoryCheckpointer {
  readonly writes: RecordedWrite[] = [];

  override async putCheckpoint(write: CheckpointWrite): Promise<number> {
    const copy = structuredClone(write);
    const committedVersion = await super.putCheckpoint(write);
    this.writes.push({ ...copy, committedVersion });
    return committedVersion;
  }
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

/** How a promise settled, without letting a rejection go unhandled. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
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

/** A transcript without ids and timestamps, to compare runs whose messages were made apart. */
export function transcriptShape(messages: readonly Message[]): Record<string, unknown>[] {
  return messages.map(({ id: _id, createdAt: _createdAt, ...rest }) => rest);
}

class CollectingReader extends MetricReader {
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
  /** Sum of a counter over all attributes; 0 when it has no data point. */
  counter(name: string): Promise<number>;
}

export function testMeter(): TestMeter {
  const reader = new CollectingReader();
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
    counter: async (name) =>
      (await points(name)).reduce((sum, point) => sum + (point.value as number), 0),
  };
}
