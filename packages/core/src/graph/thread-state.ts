import { loadThread, loadVersion } from "../runtime/thread-snapshot.js";
import { stepTasks, type StepPosition } from "../runtime/step-tasks.js";
import type { Checkpointer, Interrupt, ThreadStatus } from "../storage/checkpointer.js";
import type { BreakpointPause } from "../storage/checkpoint-record.js";
import type { GraphDefinition } from "../definition/graph-definition.js";
import type { BaseState } from "../definition/reducers.js";
import { childThreadId, Subgraph } from "./subgraph.js";

/** A thread as `getState` reports it: its latest version, or the version asked for. */
export interface ThreadState<S extends BaseState> {
  values: S;
  version: number;
  /** The node to run next (`null` at END). */
  currentNode: string | null;
  /** The nodes the next step runs (several for a fan-out; `[]` at END), as LangGraph's `next`. */
  next: string[];
  step: number;
  status: ThreadStatus;
  interrupts: Interrupt[];
  /**
   * With status `interrupted` and no interrupts: the static breakpoint the thread paused at
   * (`invoke(null, { threadId })` continues it); otherwise the last one it paused at, or `null`.
   */
  breakpoint: BreakpointPause | null;
  /** The version this one was made from (an earlier one for a fork); `null` for the first. */
  parentVersion: number | null;
  /** The node whose step wrote this version; `null` for input, an edit or a status change. */
  node: string | null;
  /** The run that wrote this version; `null` for a write outside a run (`updateState`). */
  runId: string | null;
  /** ISO-8601 time of the write. */
  createdAt: string;
  /**
   * With `getState({ threadId, subgraphs: true })`: the state of each subgraph the thread's
   * current step runs (or ran before it paused, stopped or failed), by its namespace (`WORKER`,
   * `WORKER:1` for a `Send`), with theirs in turn. Absent otherwise.
   */
  subgraphs?: Record<string, ThreadState<BaseState>>;
}

/**
 * One version in `getStateHistory`: the state's fields without the transcript (a version names
 * how many messages it holds; `getState({ threadId, version })` reads them).
 */
export interface StateHistoryEntry<S extends BaseState> {
  version: number;
  parentVersion: number | null;
  step: number;
  /** The node whose step wrote this version; `null` for input, an edit or a status change. */
  node: string | null;
  /** The node the thread was to run next at this version (`null` at END). */
  nextNode: string | null;
  status: ThreadStatus;
  runId: string | null;
  createdAt: string;
  values: Omit<S, "messages">;
  messageCount: number;
  interrupts: Interrupt[];
  /**
   * The OpenTelemetry trace of the run that wrote this version (its span's trace id); `null`
   * when that run was not traced, or for an edit.
   */
  traceId: string | null;
}

/**
 * The thread's latest committed state on `checkpointer` (or, with `version`, that version's),
 * or `null` when it does not exist (or the version is not kept).
 */
export async function readThreadState<S extends BaseState>(
  checkpointer: Checkpointer,
  graph: GraphDefinition<S>,
  threadId: string,
  subgraphs: boolean,
  version?: number,
): Promise<ThreadState<S> | null> {
  const snapshot =
    version === undefined
      ? await loadThread(checkpointer, threadId)
      : await loadVersion(checkpointer, threadId, version);
  if (!snapshot) return null;
  const { checkpoint, messages } = snapshot;
  const state: ThreadState<S> = {
    values: { ...checkpoint.values, messages } as unknown as S,
    version: checkpoint.version,
    currentNode: checkpoint.currentNode,
    next: stepTasks(checkpointPosition(checkpoint)).map((task) => task.node),
    step: checkpoint.step,
    status: checkpoint.status,
    interrupts: checkpoint.interrupts,
    breakpoint: checkpoint.breakpoint ?? null,
    parentVersion: checkpoint.parentVersion,
    node: checkpoint.node,
    runId: checkpoint.runId,
    createdAt: checkpoint.updatedAt,
  };
  if (!subgraphs) return state;
  state.subgraphs = {};
  for (const task of stepTasks(checkpointPosition(checkpoint))) {
    const node = graph.nodes.get(task.node);
    if (!(node instanceof Subgraph)) continue;
    const namespace = task.namespace || task.node;
    const childId = childThreadId(threadId, namespace, checkpoint.step);
    const child = await readThreadState(checkpointer, node.graph.definition, childId, true);
    if (child) state.subgraphs[namespace] = child;
  }
  return state;
}

function checkpointPosition(checkpoint: {
  currentNode: string | null;
  frontier?: StepPosition["frontier"];
}): StepPosition {
  return { currentNode: checkpoint.currentNode, frontier: checkpoint.frontier ?? null };
}
