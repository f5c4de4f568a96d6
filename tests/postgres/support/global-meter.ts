import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";

/** A reader that exports only when asked. */
class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

let reader: OnDemandReader | undefined;

/**
 * Registers an OpenTelemetry SDK as the process's global meter provider (once per process) and
 * returns a reader of counter totals. Global, because `PgCheckpointer` counts Redis failures on
 * the global meter, not on the graph's; call it before creating the checkpointers and graphs
 * whose instruments should be read.
 */
export function globalCounters(): { sum(name: string, attributes?: object): Promise<number> } {
  if (!reader) {
    reader = new OnDemandReader();
    const provider = new MeterProvider({ readers: [reader] });
    // A process that ran another test file before this one may hold that file's provider.
    if (!metrics.setGlobalMeterProvider(provider)) {
      metrics.disable();
      metrics.setGlobalMeterProvider(provider);
    }
  }
  const registered = reader;
  return {
    async sum(name, attributes = {}) {
      const { resourceMetrics } = await registered.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((metric) => metric.descriptor.name === name)
        .flatMap((metric) => metric.dataPoints as { attributes: object; value: unknown }[])
        .filter((point) =>
          Object.entries(attributes).every(
            ([key, value]) => (point.attributes as Record<string, unknown>)[key] === value,
          ),
        )
        .reduce((total: number, point) => total + (point.value as number), 0);
    },
  };
}
