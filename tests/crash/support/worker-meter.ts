import type { Meter } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";

/** A reader that exports only when asked. */
class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** Counter totals by name and tool, e.g. `{ "tenxgraph.tool.in_doubt": { charge_card: 1 } }`. */
export type MetricSums = Record<string, Record<string, number>>;

/** An OpenTelemetry meter of the real SDK, read on demand to report the runtime's counters. */
export function workerMeter(): { meter: Meter; sums(): Promise<MetricSums> } {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    meter: provider.getMeter("10xgraph"),
    async sums() {
      const sums: MetricSums = {};
      const { resourceMetrics } = await reader.collect();
      for (const metric of resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
        const name = metric.descriptor.name;
        for (const point of metric.dataPoints) {
          if (typeof point.value !== "number") continue; // histograms
          const tool = String(point.attributes.tool ?? "");
          sums[name] ??= {};
          sums[name][tool] = (sums[name][tool] ?? 0) + point.value;
        }
      }
      return sums;
    },
  };
}
