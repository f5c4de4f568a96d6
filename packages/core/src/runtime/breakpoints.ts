import { GraphValidationError } from "../errors/errors.js";
import type { BreakpointPause } from "../storage/checkpoint-record.js";
import { stepTasks, type StepPosition } from "./step-tasks.js";

/** The nodes a static breakpoint pauses at: their names, or `"*"` for every node. */
export type NodeSelection = "*" | readonly string[];

/** Static breakpoints: pause before the nodes of `before` run, after those of `after` ran. */
export interface Breakpoints {
  before: NodeSelection;
  after: NodeSelection;
}

/** No breakpoint (the default, and every subgraph's child run). */
export const NO_BREAKPOINTS: Breakpoints = Object.freeze({ before: [], after: [] });

/** The options that set breakpoints, in `compile()` and in a run's config (as LangGraph.js names them). */
export interface BreakpointOptions {
  /** Pause before these nodes run (`"*"`: every node); `invoke(null, { threadId })` continues. */
  interruptBefore?: NodeSelection;
  /** Pause after these nodes ran and their step was written; `invoke(null, { threadId })` continues. */
  interruptAfter?: NodeSelection;
}

/**
 * The breakpoints `options` set, over `fallback` (a run's config over the graph's): each list
 * checked against the graph's nodes, so a typo is `GRAPH_009` before anything runs.
 */
export function resolveBreakpoints(
  options: BreakpointOptions,
  nodes: ReadonlyMap<string, unknown>,
  where: string,
  fallback: Breakpoints = NO_BREAKPOINTS,
): Breakpoints {
  return {
    before: selectionOf(
      options.interruptBefore,
      nodes,
      `${where} interruptBefore`,
      fallback.before,
    ),
    after: selectionOf(options.interruptAfter, nodes, `${where} interruptAfter`, fallback.after),
  };
}

function selectionOf(
  value: unknown,
  nodes: ReadonlyMap<string, unknown>,
  name: string,
  fallback: NodeSelection,
): NodeSelection {
  if (value === undefined || value === null) return fallback;
  if (value === "*") return "*";
  if (!Array.isArray(value) || value.some((node) => typeof node !== "string")) {
    throw new GraphValidationError(
      "GRAPH_009",
      `${name} must be a list of node names or "*", got ${JSON.stringify(value) ?? String(value)}`,
    );
  }
  const unknown = (value as string[]).filter((node) => !nodes.has(node));
  if (unknown.length > 0) {
    throw new GraphValidationError(
      "GRAPH_009",
      `${name} names ${unknown.map((node) => `'${node}'`).join(", ")}, not a node of this graph ` +
        `(nodes: ${[...nodes.keys()].join(", ")})`,
    );
  }
  return Object.freeze([...new Set(value as string[])]);
}

/** The nodes of `ran` that `selection` names, in their order (several for a fan-out step). */
export function nodesAt(selection: NodeSelection, ran: readonly string[]): string[] {
  const named = [...new Set(ran)];
  return selection === "*" ? named : named.filter((node) => selection.includes(node));
}

/**
 * The pause before the step at `position`, or `null`: the step's nodes that `before` names,
 * unless the thread already paused before this very step (`previous`) and is being continued.
 */
export function pauseBefore(
  breakpoints: Breakpoints,
  position: StepPosition & { step: number },
  previous: BreakpointPause | null,
): BreakpointPause | null {
  if (previous?.when === "before" && previous.step === position.step) return null;
  const nodes = nodesAt(
    breakpoints.before,
    stepTasks(position).map((task) => task.node),
  );
  return nodes.length > 0 ? { when: "before", step: position.step, nodes } : null;
}

/** The pause after a step that ran `ran`, leaving the thread at `step`, or `null`. */
export function pauseAfter(
  breakpoints: Breakpoints,
  ran: readonly string[],
  step: number,
): BreakpointPause | null {
  const nodes = nodesAt(breakpoints.after, ran);
  return nodes.length > 0 ? { when: "after", step, nodes } : null;
}
