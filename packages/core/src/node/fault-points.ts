/**
 * Named places in the runtime where a test can inject a fault (throw, pause, kill the process).
 * Each comment says which window the point opens.
 */
export const FAULT_POINTS = {
  /** A tool returned; its result is not recorded yet: the window the ledger cannot close. */
  TOOL_AFTER_RETURN: "tool.after_return",
  /** A tool's result is recorded in the ledger; the node has not finished. */
  LEDGER_AFTER_RECORD: "ledger.after_record",
  /** A node finished and its update is applied; the step's durable write has not happened. */
  STEP_BEFORE_WRITE: "step.before_write",
  /** The step's durable write committed. */
  STEP_AFTER_WRITE: "step.after_write",
} as const;

/** One of {@link FAULT_POINTS}. */
export type FaultPointName = (typeof FAULT_POINTS)[keyof typeof FAULT_POINTS];

/** Details passed to a fault point: where the run is. */
export interface FaultContext {
  threadId: string;
  runId: string;
  node: string;
  toolName?: string;
  key?: string | null;
}

/** What `compile({ faultPoints })` accepts; `FaultPoints` in `@tenxgraph/core/testing` implements it. */
export interface FaultInjector {
  hit(point: FaultPointName, context: FaultContext): void | Promise<void>;
}
