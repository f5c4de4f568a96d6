import { errorText } from "../errors/errors.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";
import { isInterruptSignal, type InterruptSignal } from "../node/interrupt.js";
import type { RunEvent } from "./run-event.js";
import type { StepTask } from "./step-tasks.js";

/**
 * A task's id: its namespace (or node) and the step, as its interrupts' ids begin; unique in a
 * thread's step, and the same when the step runs again after a crash.
 */
export function taskId(task: StepTask, step: number): string {
  return `${task.namespace || task.node}:${step}`;
}

/**
 * The `task_start` event of a task: its input is what the node gets (a `Send`'s input, or the
 * step's state), its triggers name what scheduled it as LangGraph.js names its channels.
 */
export function taskStart(task: StepTask, step: number, state: BaseState): RunEvent {
  return {
    type: "task_start",
    id: taskId(task, step),
    name: task.node,
    input: task.input ?? state,
    triggers: task.input ? ["__pregel_push"] : [`branch:to:${task.node}`],
  };
}

/**
 * The `task_result` event of a task once every task of its step settled: its update's writes
 * (`[field, value]` pairs), the interrupts it raised, or its error's text.
 */
export function taskResult(
  task: StepTask,
  step: number,
  settled: PromiseSettledResult<{ update: StateUpdate<BaseState> }>,
): RunEvent {
  const failed = settled.status === "rejected";
  const interrupted = failed && isInterruptSignal(settled.reason);
  return {
    type: "task_result",
    id: taskId(task, step),
    name: task.node,
    result: failed ? [] : Object.entries(settled.value.update),
    interrupts: interrupted ? (settled.reason as InterruptSignal).interrupts : [],
    error: failed && !interrupted ? errorText(settled.reason) : null,
  };
}
