import type { Frontier, FrontierTask } from "../storage/checkpointer.js";

/** One task of a step: the node, the `Send` input it runs with, and its ledger namespace. */
export interface StepTask {
  node: string;
  /** A `Send`'s input, laid over the node's copy of the state; `undefined` for an edge's node. */
  input: Record<string, unknown> | undefined;
  /** The namespace of its tool calls' ledger keys and of its interrupts' ids (`""`: none). */
  namespace: string;
}

/** Where a thread stands between steps: the node to run next, or the frontier of a fan-out. */
export interface StepPosition {
  /** The next step's node, its first task's with a frontier; `null` at END. */
  currentNode: string | null;
  /** `null` for the plain chain: `currentNode` alone. */
  frontier: Frontier | null;
}

/**
 * The tasks the step at `position` runs, each with its namespace. The plain chain's one node has
 * none, so its ledger keys and interrupt ids are those a thread had before fan-out. In a
 * frontier, a node an edge reached is named by itself (the frontier holds each such node once),
 * a `Send` by its node and its place in the frontier: both are read back from the step's write,
 * so a replay after a crash gives each task the namespace it had.
 */
export function stepTasks(position: StepPosition): StepTask[] {
  if (!position.frontier) {
    return position.currentNode === null
      ? []
      : [{ node: position.currentNode, input: undefined, namespace: "" }];
  }
  return position.frontier.tasks.map((task, index) => ({
    node: task.node,
    input: task.input as Record<string, unknown> | undefined,
    // A task a migration renamed keeps the namespace it had (see `FrontierTask.namespace`).
    namespace: task.namespace ?? (task.input === undefined ? task.node : `${task.node}:${index}`),
  }));
}

/**
 * The position after a step that scheduled `tasks` (in order; an edge's node once, each `Send`
 * as given) with `joins` still waiting: the plain chain when that is one node reached by an edge
 * and no join waits, END when nothing is scheduled (a join still waiting then never runs: none
 * of its missing sources can finish).
 */
export function positionOf(tasks: readonly FrontierTask[], joins: Frontier["joins"]): StepPosition {
  if (tasks.length === 0) return { currentNode: null, frontier: null };
  const plain = tasks.length === 1 && tasks[0]!.input === undefined;
  if (plain && Object.keys(joins).length === 0) {
    return { currentNode: tasks[0]!.node, frontier: null };
  }
  return { currentNode: tasks[0]!.node, frontier: { tasks: [...tasks], joins } };
}
