import { InvalidRunError, StaleStateError } from "../errors/errors.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";
import { uuidv7 } from "../messages/ids.js";
import { Message } from "../messages/message.js";
import { deepCopy } from "../definition/state-copy.js";
import type { RunDependencies } from "./run-dependencies.js";
import { applyCallerUpdate, requireSchema, validateInput } from "./caller-input.js";
import { routeStep } from "./route.js";
import { forkPoint } from "./run-start.js";
import { loadThread } from "./thread-snapshot.js";
import { diffTranscript } from "./transcript-change.js";

/** Options of `updateState`. */
export interface UpdateStateOptions {
  /**
   * Write the update as if this node had returned it: the thread then stands at the node its
   * edge leads to (its conditional edge is asked, with the updated state), pending interrupts
   * are dropped, and `invoke(null)` runs from there. Without it the thread's position, status
   * and interrupts are kept: only the state changes.
   */
  asNode?: string;
}

/**
 * Writes `update` to the thread's latest version through the reducers, as the next version,
 * with the same compare-and-swap as a run's step: a run that writes in between makes this fail
 * with `StaleStateError` (and this write makes that run's next step fail). Returns the version.
 */
export async function updateThreadState<S extends BaseState>(
  deps: RunDependencies<S>,
  threadId: string,
  update: StateUpdate<S>,
  options: UpdateStateOptions,
): Promise<number> {
  validateInput(update);
  const asNode = options.asNode;
  if (asNode !== undefined && !deps.graph.nodes.has(asNode)) {
    const known = [...deps.graph.nodes.keys()].join(", ");
    throw new InvalidRunError("INPUT_001", `updateState: no node '${asNode}' (nodes: ${known})`);
  }
  const snapshot = await loadThread(deps.checkpointer, threadId);
  if (!snapshot) {
    throw new InvalidRunError(
      "THREAD_001",
      `Thread '${threadId}' does not exist: nothing to update`,
    );
  }
  const { checkpoint } = snapshot;
  const state = { ...deepCopy(checkpoint.values), messages: snapshot.messages.slice() } as S;
  applyCallerUpdate(deps, state, update);
  requireSchema(deps, state);
  const next =
    asNode === undefined
      ? { currentNode: checkpoint.currentNode, frontier: checkpoint.frontier ?? null }
      : await routeStep(
          deps,
          [{ node: asNode, goto: undefined }],
          state,
          checkpoint.frontier?.joins ?? {},
        );
  const position =
    asNode === undefined
      ? {
          step: checkpoint.step,
          status: checkpoint.status,
          interrupts: checkpoint.interrupts,
          resumeAnswers: checkpoint.resumeAnswers,
          // A pause at a breakpoint stays one: `invoke(null)` continues after the edit.
          breakpoint: checkpoint.breakpoint ?? null,
        }
      : {
          step: checkpoint.step + 1,
          // Paused where the node's edges lead: `invoke(null)` continues from there.
          status: next.currentNode === null ? ("completed" as const) : ("stopped" as const),
          interrupts: [],
          resumeAnswers: {},
        };
  const { messages, ...values } = state;
  // A position this graph routed to is its own; a kept one stays the version that wrote it.
  const graph = asNode === undefined ? checkpoint.graph : deps.graph.version;
  return deps.checkpointer.putCheckpoint({
    ...(graph === undefined ? {} : { graph }),
    threadId,
    incarnation: checkpoint.incarnation,
    userId: checkpoint.userId,
    expectedVersion: checkpoint.version,
    node: asNode ?? null,
    runId: null,
    ...next,
    values,
    ...position,
    ...diffTranscript(snapshot.durable, messages),
  });
}

/** What `writeState` writes, as given: no reducer runs and no node is recorded. */
export interface StateWrite {
  /** The thread's state fields, whole, in place of the stored ones (absent: kept). */
  values?: Record<string, unknown>;
  /** Messages appended to the transcript, in order. */
  appendMessages?: readonly Message[];
  /** Also clear the run position: no next node, no pending interrupts, status `completed`. */
  resetPosition?: boolean;
  /**
   * Start from this version instead of the latest: the thread as it stood then (state,
   * transcript, position) is written as the next version, that version its parent, as a run's
   * fork writes it; the other fields apply on top. The versions after it stay in the history.
   */
  fromVersion?: number;
  /**
   * The version the caller computed the write from (0: the thread must not exist yet); finding
   * another is `StaleStateError`. Absent: the latest, whichever it is.
   */
  expectedVersion?: number;
}

/**
 * Writes `write` as the thread's next version, creating the thread (owned by `userId`) when it
 * does not exist, with the compare-and-swap of a step. For hosts that edit a thread outside a
 * run with their own merge rules (an HTTP API's state edits); returns the version.
 */
export async function writeThreadState<S extends BaseState>(
  deps: RunDependencies<S>,
  threadId: string,
  userId: string | null,
  write: StateWrite,
): Promise<number> {
  const appended = [...(write.appendMessages ?? [])];
  validateInput({ ...write.values, messages: appended });
  if (write.values && "messages" in write.values) {
    throw new InvalidRunError("INPUT_001", "writeState: values hold no messages: append them");
  }
  if (appended.some((message) => !Message.is(message))) {
    throw new InvalidRunError("INPUT_001", "writeState: appendMessages holds a removal");
  }
  const latest = await loadThread(deps.checkpointer, threadId);
  const found = latest?.checkpoint.version ?? 0;
  if (write.expectedVersion !== undefined && write.expectedVersion !== found) {
    throw new StaleStateError(threadId, write.expectedVersion, latest ? found : null);
  }
  const snapshot =
    write.fromVersion === undefined
      ? latest
      : await forkPoint(deps, threadId, write.fromVersion, latest);
  const checkpoint = snapshot?.checkpoint ?? null;
  const transcript = snapshot
    ? diffTranscript(snapshot.durable, [...snapshot.messages, ...appended])
    : { newMessages: appended };
  const base = {
    threadId,
    expectedVersion: found,
    ...(snapshot?.forkOf === undefined ? {} : { parentVersion: snapshot.forkOf }),
    values: deepCopy(write.values ?? checkpoint?.values ?? {}),
    ...transcript,
  };
  if (checkpoint === null || write.resetPosition === true) {
    return deps.checkpointer.putCheckpoint({
      ...base,
      // An edit that creates the thread starts its life; any other goes on with the one read.
      incarnation: checkpoint?.incarnation ?? uuidv7(),
      userId: checkpoint ? checkpoint.userId : userId,
      step: checkpoint?.step ?? 0,
      currentNode: null,
      frontier: null,
      status: "completed",
      interrupts: [],
      resumeAnswers: {},
      graph: deps.graph.version,
    });
  }
  const { incarnation, step, currentNode, status, interrupts, resumeAnswers } = checkpoint;
  return deps.checkpointer.putCheckpoint({
    ...base,
    incarnation,
    userId: checkpoint.userId,
    step,
    currentNode,
    frontier: checkpoint.frontier ?? null,
    status,
    interrupts,
    resumeAnswers,
    ...(checkpoint.graph === undefined ? {} : { graph: checkpoint.graph }),
    breakpoint: checkpoint.breakpoint ?? null,
  });
}
