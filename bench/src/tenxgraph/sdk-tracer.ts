import type { Tracer } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
/** The name tenxgraph's own tracer has (`TRACER_NAME` in core's events/tracing.ts). */
const TRACER_NAME = "10xgraph";

/**
 * Takes every span and keeps none: the SDK's whole cost (sampling, ids, attributes, the span
 * processor's hand-off) without an exporter's I/O, and without spans piling up in memory.
 */
class DiscardingExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

/**
 * A tracer of the OpenTelemetry SDK as an app registers one (every span sampled, each ended
 * span handed to its exporter), given to the loop directly: registered globally it would
 * trace the no-SDK loops of the same process too.
 */
export function sdkTracer(): Tracer {
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new DiscardingExporter())],
  });
  return provider.getTracer(TRACER_NAME);
}
