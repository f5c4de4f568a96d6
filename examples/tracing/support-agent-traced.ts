/**
 * The support agent, traced: its runs, steps and tool calls go to any OpenTelemetry collector
 * over OTLP/HTTP (Jaeger, Grafana Tempo, Langfuse, Datadog's agent, an OpenTelemetry Collector).
 * The model is scripted (no key, no network but the collector's). The worker "dies" before the
 * tool step is written and the thread is continued: the continued run's trace shows
 * which calls were replayed from the ledger instead of run again, and links to the run it
 * continues.
 *
 *   docker run -p 4318:4318 -p 16686:16686 jaegertracing/all-in-one   # then open :16686
 *   npx tsx examples/tracing/support-agent-traced.ts
 *
 * OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) names the collector.
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Message, silentLogger } from "@tenxgraph/core";
import { FaultPoints, SUPPORT_SCRIPT, supportAgent, supportTools } from "@tenxgraph/core/testing";

// What an app does once at startup (the Node SDK, `@opentelemetry/sdk-node`, does the same).
const provider = new BasicTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
trace.setGlobalTracerProvider(provider);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const faults = new FaultPoints();
const app = supportAgent({
  model: SUPPORT_SCRIPT,
  tools: supportTools(),
  faultPoints: faults,
  logger: silentLogger,
  tracing: { name: "support" }, // the global tracer: no `tracer` needed
});
const threadId = `order-4821-${Date.now()}`;
let writes = 0;

// The worker dies as the tool step is about to be written (an error stands in for the crash):
// the calls recorded on their own are replayed, the one riding in the lost write is in doubt.
faults.arm(
  "step.before_write",
  () => {
    throw new Error("worker killed");
  },
  // The third write: the start, the model's step, then the tool step's.
  { when: () => (writes += 1) === 3, times: 1 },
);
await app
  .invoke({ messages: [Message.user("charge order 4821")] }, { threadId })
  .catch((error: Error) => console.log(`crashed: ${error.message}`));
faults.disarm("step.before_write");
const result = await app.invoke(null, { threadId });
console.log(`status: ${result.status}, run ${result.runId}`);

await provider.shutdown(); // flushes the spans to the collector
console.log("spans sent to the collector");
