import { loadThread } from "../runtime/thread-snapshot.js";
import { stepTasks } from "../runtime/step-tasks.js";
import type { Checkpointer, Interrupt, ThreadStatus } from "../storage/checkpointer.js";
import type { GraphDefinition } from "./graph-definition.js";
import type { BaseState } from "./reducers.js";
import { childThreadId, Subgraph } from "./subgraph.js";

/** A thread as `getState` reports it. */
export interface ThreadState<S extends BaseState> {
  values: S;
  version: number;
  currentNode: string | null;
  step: number;
  status: ThreadStatus;
  interrupts: Interrupt[];
  /**
   * With `getState({ threadId, subgraphs: true })`: the state of each subgraph the thread's
   * current step runs (or ran before it paused, stopped or failed), by its namespace (`WORKER`,
   * `WORKER:1` for a `Send`), with theirs in turn. Absent otherwise.
   */
  subgraphs?: Record<string, ThreadState<BaseState>>;
}

/** The thread's latest committed state on `checkpointer`, or `null` when it does not exist. */
export async function readThreadState<S extends BaseState>(
  checkpointer: Checkpointer,
  graph: GraphDefinition<S>,
  threadId: string,
  subgraphs: boolean,
): Promise<ThreadState<S> | null> {
  const snapshot = await loadThread(checkpointer, threadId);
  if (!snapshot) return null;
  const { checkpoint, messages } = snapshot;
  const state: ThreadState<S> = {
    values: { ...checkpoint.values, messages } as unknown as S,
    version: checkpoint.version,
    currentNode: checkpoint.currentNode,
    step: checkpoint.step,
    status: checkpoint.status,
    interrupts: checkpoint.interrupts,
  };
  if (!subgraphs) return state;
  state.subgraphs = {};
  const position = { currentNode: checkpoint.currentNode, frontier: checkpoint.frontier ?? null };
  for (const task of stepTasks(position)) {
    const node = graph.nodes.get(task.node);
    if (!(node instanceof Subgraph)) continue;
    const namespace = task.namespace || task.node;
    const childId = childThreadId(threadId, namespace, checkpoint.step);
    const child = await readThreadState(checkpointer, node.graph.definition, childId, true);
    if (child) state.subgraphs[namespace] = child;
  }
  return state;
}
