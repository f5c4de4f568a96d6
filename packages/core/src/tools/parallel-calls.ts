import { isDeepStrictEqual } from "node:util";
import type { Logger } from "../events/logger.js";
import type { BaseState, Reducer } from "../graph/reducers.js";
import type { Message } from "../messages/message.js";
import { deepCopy } from "../graph/state-copy.js";

/** Fields of a state other than the transcript, deep-copied. */
export function snapshotFields(state: BaseState): Record<string, unknown> {
  const { messages: _messages, ...fields } = state;
  return deepCopy(fields);
}

/**
 * A private copy of the state for one tool call, its fields deep-copied. The transcript is not
 * the node's array but `transcript`, a copy the node's calls may share (its messages are
 * immutable, and one copy per call made a long thread's tool step copy it once per call), so a
 * tool pushing into `ctx.state.messages` changes nothing of the node's state.
 */
export function branchState<S extends BaseState>(
  state: S,
  baseline: Record<string, unknown>,
  transcript: Message[] = state.messages.slice(),
): S {
  return { ...deepCopy(baseline), messages: transcript } as unknown as S;
}

/** The fields `state` changed relative to `baseline`. */
export function changedFields(
  baseline: Record<string, unknown>,
  state: BaseState,
): Record<string, unknown> {
  const current = state as unknown as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const field of new Set([...Object.keys(baseline), ...Object.keys(current)])) {
    if (field === "messages") continue;
    if (!isDeepStrictEqual(baseline[field], current[field])) changes[field] = current[field];
  }
  return changes;
}

/**
 * Merges the changes of parallel branches (in call order) into `state`. A field changed by one
 * branch (or to the same value by several) takes that value. A field changed by several goes through its reducer, folded from
 * the baseline in call order; without a reducer the last branch wins and a warning names the
 * conflict, since one of the writes is lost. Branches hand back whole values, not deltas, so
 * the reducer should combine whole values (union by id, max, object merge); a delta reducer
 * such as a sum or a concat counts the baseline once per writer.
 */
export function mergeBranches(
  state: BaseState,
  baseline: Record<string, unknown>,
  branches: readonly { toolCallId: string; changes: Record<string, unknown> }[],
  reducers: Readonly<Record<string, Reducer<unknown> | undefined>>,
  logger: Logger,
): void {
  const target = state as unknown as Record<string, unknown>;
  const writers = new Map<string, { toolCallId: string; value: unknown }[]>();
  for (const { toolCallId, changes } of branches) {
    for (const [field, value] of Object.entries(changes)) {
      const list = writers.get(field) ?? [];
      list.push({ toolCallId, value });
      writers.set(field, list);
    }
  }
  for (const [field, writes] of writers) {
    if (writes.every((write) => isDeepStrictEqual(write.value, writes[0]!.value))) {
      target[field] = writes[0]!.value;
      continue;
    }
    const reducer = reducers[field];
    if (reducer) {
      target[field] = writes.reduce((acc, write) => reducer(acc, write.value), baseline[field]);
      continue;
    }
    logger.warn(
      { field, toolCallIds: writes.map((w) => w.toolCallId) },
      `Parallel tool calls wrote state field '${field}' differently; kept the last in call order (declare a reducer to combine them)`,
    );
    target[field] = writes.at(-1)!.value;
  }
}
