/**
 * A real OpenTelemetry SDK tracer whose spans a test reads back, and a text tree of them (the
 * rendering in docs/events-logs-metrics.md#traces is one).
 * @module
 */
import type { Tracer } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { TRACER_NAME } from "../events/tracing.js";

/** An SDK tracer exporting to memory. */
export interface TestTracer {
  tracer: Tracer;
  /** The ended spans, in the order they ended. */
  spans(): ReadableSpan[];
  /** The first ended span named `name`; fails the test when there is none. */
  span(name: string): ReadableSpan;
  reset(): void;
}

export function testTracer(): TestTracer {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer(TRACER_NAME),
    spans: () => exporter.getFinishedSpans(),
    span(name) {
      const found = exporter.getFinishedSpans().find((span) => span.name === name);
      if (!found) throw new Error(`no span named '${name}'`);
      return found;
    },
    reset: () => exporter.reset(),
  };
}

/** Attributes left out of {@link spanTree}: ids that differ on every run. */
const VOLATILE = new Set([
  "gen_ai.conversation.id",
  "tenxgraph.thread.id",
  "tenxgraph.run.id",
  "gen_ai.tool.call.id",
  "tenxgraph.ledger.key",
]);

/**
 * The spans as an indented tree, children in start order, each with its attributes (ids left
 * out) and its events; a span whose parent is not among them is a root.
 */
export function spanTree(spans: readonly ReadableSpan[]): string {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const byStart = [...spans].sort((a, b) => hrtimeMs(a.startTime) - hrtimeMs(b.startTime));
  const children = (parentId: string | undefined) =>
    byStart.filter((span) => {
      const parent = span.parentSpanContext?.spanId;
      return parentId === undefined ? !parent || !ids.has(parent) : parent === parentId;
    });
  const lines: string[] = [];
  const walk = (span: ReadableSpan, depth: number) => {
    const pad = "  ".repeat(depth);
    lines.push(`${pad}${span.name}${attributesText(span.attributes)}`);
    for (const event of span.events) {
      lines.push(`${pad}  · event ${event.name}${attributesText(event.attributes ?? {})}`);
    }
    for (const link of span.links) lines.push(`${pad}  · link to trace ${link.context.traceId}`);
    for (const child of children(span.spanContext().spanId)) walk(child, depth + 1);
  };
  for (const root of children(undefined)) walk(root, 0);
  return lines.join("\n");
}

function attributesText(attributes: Record<string, unknown>): string {
  const shown = Object.entries(attributes)
    .filter(([key]) => !VOLATILE.has(key))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return shown.length === 0 ? "" : `  {${shown.join(", ")}}`;
}

function hrtimeMs([seconds, nanos]: [number, number]): number {
  return seconds * 1000 + nanos / 1e6;
}
