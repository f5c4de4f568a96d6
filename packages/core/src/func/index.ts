/**
 * The functional API: a workflow written as one function (`entrypoint`) whose steps (`task`)
 * are recorded in the tool ledger, so a resumed or crashed run replays finished tasks instead
 * of running them again. LangGraph.js's `entrypoint` and `task`, replay-safe. See
 * docs/functional-api.md.
 * @module
 */
export { entrypoint } from "./entrypoint.js";
export type {
  Entrypoint,
  EntrypointContext,
  EntrypointOptions,
  EntrypointResult,
  EntrypointState,
} from "./entrypoint.js";
export { task } from "./task.js";
export type { NamedTaskOptions, Task, TaskInDoubtPolicy, TaskOptions } from "./task.js";
export type { TaskContext } from "./task-call.js";
