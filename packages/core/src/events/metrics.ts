import { metrics, type Counter, type Histogram, type Meter } from "@opentelemetry/api";

/** The meter name every tenxgraph instrument is created under. */
export const METER_NAME = "10xgraph";

/**
 * The runtime's instruments, created once per compiled graph. Without a registered
 * OpenTelemetry SDK they are no-ops and cost nothing.
 */
export class RuntimeMetrics {
  readonly nodeTimeouts: Counter;
  readonly toolTimeouts: Counter;
  readonly toolErrors: Counter;
  readonly ledgerHits: Counter;
  readonly ledgerRecordFailures: Counter;
  readonly inDoubt: Counter;
  readonly runStops: Counter;
  readonly storageConflicts: Counter;
  readonly stepDuration: Histogram;
  readonly toolDuration: Histogram;

  constructor(meter: Meter = metrics.getMeter(METER_NAME)) {
    const counter = (name: string, description: string) =>
      meter.createCounter(`tenxgraph.${name}`, { description });
    this.nodeTimeouts = counter("node.timeouts", "Nodes that ran past their deadline");
    this.toolTimeouts = counter("tool.timeouts", "Tool calls that ran past their deadline");
    this.toolErrors = counter("tool.errors", "Tool calls that ended in a tool error");
    this.ledgerHits = counter("tool.ledger_hits", "Tool calls replayed from the ledger");
    this.ledgerRecordFailures = counter(
      "tool.ledger_record_failures",
      "Tool calls that completed but could not be recorded",
    );
    this.inDoubt = counter("tool.in_doubt", "Calls found started but never recorded");
    this.runStops = counter("run.stops", "Runs ended by a stop request");
    this.storageConflicts = counter("storage.conflicts", "Writes refused by a version conflict");
    this.stepDuration = meter.createHistogram("tenxgraph.step.duration", {
      description: "Duration of one node step including its durable write",
      unit: "ms",
    });
    this.toolDuration = meter.createHistogram("tenxgraph.tool.duration", {
      description: "Duration of one tool execution",
      unit: "ms",
    });
  }
}
