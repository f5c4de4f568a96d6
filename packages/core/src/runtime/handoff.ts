/**
 * A handoff: a node inside a subgraph returned `new Command({ graph: Command.PARENT, goto })`.
 * The child's step applies the node's update, ends the child's run, and records where the
 * parent goes in its write (`CheckpointRecord.handoff`), which the subgraph node reads.
 */
import { GraphValidationError } from "../errors/errors.js";
import type { ParentHandoff } from "../storage/checkpoint-record.js";
import type { ResolvedRunConfig } from "./run-config.js";

/** Refuses a handoff from a graph that has no parent, before anything of the step is written. */
export function requireParent(config: ResolvedRunConfig, node: string): void {
  if (config.parentThreadId) return;
  throw new GraphValidationError(
    "GRAPH_010",
    `Node '${node}' returned new Command({ graph: Command.PARENT }) on thread ` +
      `'${config.threadId}', which is not a subgraph's: only a node inside a subgraph can hand off to its parent`,
  );
}

/** The step's handoff: the targets of every task that handed off, in task order; else none. */
export function stepHandoff(
  results: readonly { handoff: string[] | undefined }[],
): ParentHandoff | undefined {
  const targets = results.flatMap((result) => result.handoff ?? []);
  return targets.length === 0 ? undefined : { goto: [...new Set(targets)] };
}
