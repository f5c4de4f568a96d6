import { GraphValidationError, NodeOutputError } from "../errors/errors.js";
import type { Goto } from "../definition/command.js";
import { END, type Edge, type RouterChoice } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { isSend, type Send } from "../definition/send.js";
import type { Frontier, FrontierTask } from "../storage/checkpointer.js";
import { findNonJson } from "../storage/json-check.js";
import type { RunDependencies } from "./run-dependencies.js";
import { positionOf, type StepPosition } from "./step-tasks.js";

/** A task of the step that finished, and where its `Command` said to go. */
export interface FinishedTask {
  node: string;
  goto: Goto | undefined;
}

/**
 * Where the run goes after a step: every edge out of every finished task (in task order, each
 * task's edges in the order they were added) and every `Command`'s `goto`. A node reached twice
 * runs once; each `Send` runs as given. A join's target runs once all its sources have finished
 * (in this step or earlier ones, as `joins` remembers). Routers see the step's merged state.
 */
export async function routeStep<S extends BaseState>(
  deps: RunDependencies<S>,
  finished: readonly FinishedTask[],
  state: S,
  joinsBefore: Frontier["joins"],
): Promise<StepPosition> {
  const tasks: FrontierTask[] = [];
  const scheduled = new Set<string>();
  // Most steps have no join waiting, and a structured clone of `{}` costs a microsecond.
  const joins = Object.keys(joinsBefore).length === 0 ? {} : structuredClone(joinsBefore);
  const schedule = (target: string | Send<unknown>) => {
    if (isSend(target)) return void tasks.push({ node: target.node, input: target.input });
    if (target === END || scheduled.has(target)) return;
    scheduled.add(target);
    tasks.push({ node: target });
  };
  for (const { node, goto } of finished) {
    for (const edge of deps.graph.edges.get(node) ?? []) {
      if (edge.kind === "direct") schedule(edge.to);
      else if (edge.kind === "join" && arrive(deps, joins, edge.to, node)) schedule(edge.to);
      else if (edge.kind === "conditional") {
        for (const target of await choose(deps, edge, node, state)) schedule(target);
      }
    }
    for (const target of asList(goto)) schedule(checkTarget(deps, node, target, null));
  }
  return positionOf(tasks, joins);
}

/** Notes that `source` finished for the join into `to`; true when that completes the join. */
function arrive<S extends BaseState>(
  deps: RunDependencies<S>,
  joins: Frontier["joins"],
  to: string,
  source: string,
): boolean {
  const arrived = new Set([...(joins[to] ?? []), source]);
  const sources = deps.graph.joins.get(to) ?? [];
  if (!sources.every((name) => arrived.has(name))) {
    joins[to] = [...arrived];
    return false;
  }
  delete joins[to];
  return true;
}

async function choose<S extends BaseState>(
  deps: RunDependencies<S>,
  edge: Extract<Edge<S>, { kind: "conditional" }>,
  from: string,
  state: S,
): Promise<(string | Send<unknown>)[]> {
  const choices = asList(await edge.router(state));
  return choices.map((choice) => checkTarget(deps, from, choice, edge.pathMap));
}

function asList(choice: RouterChoice | undefined): (string | Send<unknown>)[] {
  if (choice === undefined) return [];
  return Array.isArray(choice)
    ? [...(choice as (string | Send<unknown>)[])]
    : [choice as string | Send<unknown>];
}

/** A router's or a `Command`'s choice as a node, `END` or a `Send`, refused when it names no node. */
function checkTarget<S extends BaseState>(
  deps: RunDependencies<S>,
  from: string,
  choice: string | Send<unknown>,
  pathMap: Record<string, string> | null,
): string | Send<unknown> {
  if (isSend(choice)) {
    if (!deps.graph.nodes.has(choice.node)) throw unknownTarget(deps, from, choice.node, null);
    requireSendInput(from, choice);
    return choice;
  }
  const target = pathMap ? pathMap[choice] : choice;
  if (target === undefined || (target !== END && !deps.graph.nodes.has(target))) {
    throw unknownTarget(deps, from, choice, pathMap);
  }
  return target;
}

function unknownTarget<S extends BaseState>(
  deps: RunDependencies<S>,
  from: string,
  choice: unknown,
  pathMap: Record<string, string> | null,
): GraphValidationError {
  const allowed = pathMap ? Object.keys(pathMap) : [...deps.graph.nodes.keys(), "END"];
  return new GraphValidationError(
    "GRAPH_006",
    `The conditional edge from '${from}' returned '${String(choice)}', which is not one of: ${allowed.join(", ")}`,
  );
}

/**
 * A `Send`'s input is written with the step (so a crash replays the same sends): a plain JSON
 * object. It may not carry `messages`: the transcript is the thread's, append-only, and a
 * branch appends to it by returning messages.
 */
function requireSendInput(from: string, send: Send<unknown>): void {
  const input = send.input;
  const problem =
    typeof input !== "object" || input === null || Array.isArray(input)
      ? `is not an object`
      : Object.hasOwn(input, "messages")
        ? `carries messages (a branch sees the thread's transcript and returns new messages)`
        : findNonJson(input, "input");
  if (problem) {
    throw new NodeOutputError(from, `routed a Send to '${send.node}' whose input ${problem}`);
  }
}
